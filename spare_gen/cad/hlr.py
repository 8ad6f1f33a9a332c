"""Hidden-line removal with OpenCASCADE: exact (HLRBRep_Algo) or mesh-based (HLRBRep_PolyAlgo) 2D polylines.

Per-model work (fusing, regularity encoding, bounding box, meshing, loading into the algorithm) is
done once in ``HlrModel``; ``HlrModel.project`` is the per-view part. Output polylines are plain
numpy arrays in projected model coordinates: x along the projector's ``x_direction``, y along
``direction x x_direction`` (image up).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from enum import Enum
from typing import Sequence

import numpy as np
from OCP.BRepLib import BRepLib
from OCP.BRepMesh import BRepMesh_IncrementalMesh
from OCP.gp import gp_Ax2, gp_Dir, gp_Pnt
from OCP.HLRAlgo import HLRAlgo_Projector
from OCP.HLRBRep import HLRBRep_Algo, HLRBRep_HLRToShape, HLRBRep_PolyAlgo, HLRBRep_PolyHLRToShape
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.build import fuse_all
from spare_gen.cad.curves2d import compound_polylines, segments_to_polylines
from spare_gen.cad.props import bounding_box

Direction = Sequence[float]

# Edges to draw (HLRBRep_HLRToShape accessors): sharp, silhouette (outline) and smooth (G1) edges.
# Left out on purpose: RgN lines (seams, splits inside one smooth surface) and iso-parameter lines.
VISIBLE_COMPOUNDS = ("VCompound", "OutLineVCompound", "Rg1LineVCompound")
HIDDEN_COMPOUNDS = ("HCompound", "OutLineHCompound", "Rg1LineHCompound")

# Faces meeting at an edge within this angle (radians) count as tangent (G1) when encoding regularity.
REGULARITY_ANGLE = 1e-6
MESH_ANGULAR_DEFLECTION = 0.3  # radians, for the poly fallback's triangulation


class HlrMethod(str, Enum):
    EXACT = "exact"  # HLRBRep_Algo on the B-rep: exact curves, can take minutes on some models
    POLY = "poly"  # HLRBRep_PolyAlgo on a triangulation: fast and robust, polygonal silhouettes


@dataclass(frozen=True)
class ViewLines:
    """One view's line drawing: lists of (k, 2) float64 polylines in projected model coordinates."""

    visible: list[np.ndarray]
    hidden: list[np.ndarray]


def prepare_shape(shape: TopoDS_Shape) -> TopoDS_Shape:
    """Fuse overlapping solids and mark seam/tangent edge continuity, so HLR can tell seams from creases."""
    shape = fuse_all(shape)
    BRepLib.EncodeRegularity_s(shape, REGULARITY_ANGLE)
    return shape


def projector(direction: Direction, x_direction: Direction) -> HLRAlgo_Projector:
    """Orthographic projector looking from ``direction`` towards the origin, ``x_direction`` to the right."""
    return HLRAlgo_Projector(gp_Ax2(gp_Pnt(0.0, 0.0, 0.0), gp_Dir(*direction), gp_Dir(*x_direction)))


def bbox_diagonal(bbox: Sequence[float]) -> float:
    return float(math.dist(bbox[:3], bbox[3:]))


class HlrModel:
    """A shape ready for hidden-line removal from any number of viewpoints (per-model work done once)."""

    def __init__(self, shape: TopoDS_Shape, method: HlrMethod | str = HlrMethod.EXACT, deflection: float = 0.002):
        """``deflection`` is the curve discretisation tolerance as a fraction of the bounding-box diagonal."""
        self.method = HlrMethod(method)
        self.shape = prepare_shape(shape)
        self.bbox = bounding_box(self.shape)
        self.diagonal = bbox_diagonal(self.bbox)
        self.tolerance = max(deflection * self.diagonal, 1e-9)
        if self.method is HlrMethod.POLY:
            BRepMesh_IncrementalMesh(self.shape, self.tolerance, False, MESH_ANGULAR_DEFLECTION, False)
            self._algo = HLRBRep_PolyAlgo()
            self._algo.Load(self.shape)
        else:
            self._algo = HLRBRep_Algo()
            self._algo.Add(self.shape)

    def project(self, direction: Direction, x_direction: Direction) -> ViewLines:
        """Visible and hidden polylines of one orthographic view."""
        if self.method is HlrMethod.POLY:
            return self._project_poly(direction, x_direction)
        compounds = run_exact(self._algo, direction, x_direction)
        return ViewLines(
            visible=compound_polylines([compounds[k] for k in VISIBLE_COMPOUNDS], self.tolerance),
            hidden=compound_polylines([compounds[k] for k in HIDDEN_COMPOUNDS], self.tolerance),
        )

    def _project_poly(self, direction: Direction, x_direction: Direction) -> ViewLines:
        self._algo.Projector(projector(direction, x_direction))
        self._algo.Update()
        shapes = HLRBRep_PolyHLRToShape()
        shapes.Update(self._algo)
        return ViewLines(
            visible=segments_to_polylines([getattr(shapes, k)() for k in VISIBLE_COMPOUNDS]),
            hidden=segments_to_polylines([getattr(shapes, k)() for k in HIDDEN_COMPOUNDS]),
        )


def run_exact(algo: HLRBRep_Algo, direction: Direction, x_direction: Direction) -> dict[str, TopoDS_Shape]:
    """Exact HLR for one view: Update + Hide, then the visible and hidden edge compounds."""
    algo.Projector(projector(direction, x_direction))
    algo.Update()
    algo.Hide()
    shapes = HLRBRep_HLRToShape(algo)
    return {name: getattr(shapes, name)() for name in VISIBLE_COMPOUNDS + HIDDEN_COMPOUNDS}


def exact_hlr_floor(shape: TopoDS_Shape, views: Sequence[tuple[Direction, Direction]]) -> float:
    """Seconds of bare OCCT exact HLR (Update + Hide + HLRToShape extraction) over ``views``.

    The benchmark's floor: per-model preparation (fusing, regularity) happens before the clock starts,
    exactly as in ``HlrModel``, so the difference to ``HlrModel.project`` is spare_gen's own cost.
    """
    algo = HLRBRep_Algo()
    algo.Add(prepare_shape(shape))
    start = time.perf_counter()
    for direction, x_direction in views:
        run_exact(algo, direction, x_direction)
    return time.perf_counter() - start
