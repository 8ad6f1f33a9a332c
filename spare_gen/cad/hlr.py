"""Hidden-line removal with OpenCASCADE: exact (HLRBRep_Algo) or mesh-based (HLRBRep_PolyAlgo) 2D polylines.

Per-model work (fusing, seam splitting, continuity, loose bounding box, meshing) is done once in
``HlrModel``; ``HlrModel.project`` is the per-view part. Output polylines are plain numpy arrays in
projected model coordinates: x along the projector's ``x_direction``, y along
``direction x x_direction`` (image up).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np
from OCP.BRepMesh import BRepMesh_IncrementalMesh
from OCP.gp import gp_Ax2, gp_Dir, gp_Pnt
from OCP.HLRAlgo import HLRAlgo_Projector
from OCP.HLRBRep import HLRBRep_Algo, HLRBRep_HLRToShape, HLRBRep_PolyAlgo, HLRBRep_PolyHLRToShape
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.curves2d import poly_view_polylines, view_polylines
from spare_gen.cad.hlr_shape import (
    EdgeLines,
    Folds,
    classified_edge_polylines,
    edge_samples,
    has_edges,
    has_faces,
    mesh_folds,
    prepare_shape,
    quick_bbox,
)
from spare_gen.config.schema import HlrMethod, RenderConfig

Direction = Sequence[float]

# Edges to draw (HLRBRep_HLRToShape accessors): sharp, silhouette (outline) and smooth (G1) edges.
# Left out on purpose: RgN lines (seams, splits inside one smooth surface) and iso-parameter lines.
VISIBLE_COMPOUNDS = ("VCompound", "OutLineVCompound", "Rg1LineVCompound")
HIDDEN_COMPOUNDS = ("HCompound", "OutLineHCompound", "Rg1LineHCompound")
SMOOTH_COMPOUNDS = ("Rg1LineVCompound", "Rg1LineHCompound")  # left out when smooth_edges=False (SPARE3D's rule)
MESH_ANGULAR_DEFLECTION = 0.3  # radians, for the poly algorithm's triangulation


@dataclass(frozen=True)
class ViewLines:
    """One view's line drawing: lists of (k, 2) float64 polylines in projected model coordinates."""

    visible: list[np.ndarray]
    hidden: list[np.ndarray]
    method: HlrMethod  # the algorithm that produced this view

    @cached_property
    def extent(self) -> np.ndarray | None:
        """(2, 2) [min, max] of every point, visible and hidden (NaN where a point is NaN); None without a point.
        Found once for the view's several checks."""
        points = self.visible + self.hidden
        if not points:
            return None
        pts = np.concatenate(points)
        return np.stack([pts.min(axis=0), pts.max(axis=0)])  # NaN propagates into both


def projector(direction: Direction, x_direction: Direction) -> HLRAlgo_Projector:
    """Orthographic projector looking from ``direction`` towards the origin, ``x_direction`` to the right."""
    return HLRAlgo_Projector(gp_Ax2(gp_Pnt(0.0, 0.0, 0.0), gp_Dir(*direction), gp_Dir(*x_direction)))


def run_exact(shape: TopoDS_Shape, direction: Direction, x_direction: Direction) -> dict[str, TopoDS_Shape]:
    """Exact HLR for one view: Update + Hide, then the visible and hidden edge compounds.

    A fresh HLRBRep_Algo per view: a reused one keeps the first view's silhouettes (its outliner
    caches them per shape), and loading a shape costs next to nothing.
    """
    algo = HLRBRep_Algo()
    algo.Add(shape)
    algo.Projector(projector(direction, x_direction))
    algo.Update()
    algo.Hide()
    shapes = HLRBRep_HLRToShape(algo)
    return {name: getattr(shapes, name)() for name in VISIBLE_COMPOUNDS + HIDDEN_COMPOUNDS}


def run_poly(meshed: TopoDS_Shape, direction: Direction, x_direction: Direction) -> dict[str, TopoDS_Shape]:
    """Mesh-based HLR for one view of a triangulated shape (fresh algorithm per view, as for exact)."""
    algo = HLRBRep_PolyAlgo()
    algo.Load(meshed)
    algo.Projector(projector(direction, x_direction))
    algo.Update()
    shapes = HLRBRep_PolyHLRToShape()
    shapes.Update(algo)
    return {name: getattr(shapes, name)() for name in VISIBLE_COMPOUNDS + HIDDEN_COMPOUNDS}


class HlrModel:
    """A shape ready for hidden-line removal from any number of viewpoints (per-model work done once).

    With the exact method, a view that comes back empty or raises (exact HLR fails silently on some
    shapes) is redone on the unsplit shape, then with the mesh algorithm; ``ViewLines.method`` says
    which algorithm drew it.
    """

    def __init__(self, shape: TopoDS_Shape, method: HlrMethod | str = HlrMethod.EXACT,
                 deflection: float = RenderConfig.model_fields["deflection"].default,
                 smooth_edges: bool = True, loose_edges: bool = False):
        """``deflection`` is the curve discretisation tolerance as a fraction of the bounding-box diagonal;
        ``smooth_edges=False`` draws sharp and silhouette edges only (no G1 edges such as fillet boundaries);
        ``loose_edges=True`` draws edges that bound no face too (left out by default, counted in ``loose_edges``)."""
        self.method = HlrMethod(method)
        if self.method is HlrMethod.AUTO:
            raise ValueError("HlrModel runs one algorithm, exact or poly (auto, exact then poly, is the caller's)")
        self.smooth_edges = smooth_edges
        keep = [n for n in VISIBLE_COMPOUNDS + HIDDEN_COMPOUNDS if smooth_edges or n not in SMOOTH_COMPOUNDS]
        self.visible_names = [n for n in VISIBLE_COMPOUNDS if n in keep]
        self.hidden_names = [n for n in HIDDEN_COMPOUNDS if n in keep]
        self.prepared = prepare_shape(shape, split_seams=self.method is HlrMethod.EXACT, loose_edges=loose_edges)
        self.loose_edges = self.prepared.loose_edges
        self.bbox = quick_bbox(self.prepared.base)
        self.diagonal = float(math.dist(self.bbox[:3], self.bbox[3:]))
        self.tolerance = deflection * self.diagonal if self.diagonal > 0 else 1e-6
        self.drawable = has_edges(self.prepared.base)
        self.edgeless_faces = not self.drawable and has_faces(self.prepared.base)  # faces that carry no edge at all
        self._meshed = False

    @cached_property
    def edge_lines(self) -> EdgeLines:
        """Every edge of the model (fused) sampled once within the curve tolerance, for ``edge_points`` and
        ``outline``."""
        return classified_edge_polylines(self.prepared.base, self.tolerance)

    @cached_property
    def edge_points(self) -> np.ndarray:
        """(n, 3) points along the model's drawn edge classes within the curve tolerance (what every view must reach)."""
        return edge_samples(self.prepared.base, self.tolerance, self.smooth_edges, self.edge_lines)

    @cached_property
    def model_points(self) -> np.ndarray:
        """(n, 3) points on the model as given (its solids before fusing, loose edges left out): its drawn edge
        classes sampled within the curve tolerance and the nodes of its curved faces' mesh (``Folds.nodes``: each
        once, not once per fold, so projecting them in every view costs a fifth). Every view of the model reaches at
        least as far as these do (they lie on it), silhouettes of curved faces included. The same samples as
        ``edge_points`` and ``outline``'s folds when nothing was fused or left out (no extra cost)."""
        faces = self.prepared.faces
        if faces is self.prepared.base:
            _, folds = self.outline
            return np.concatenate([self.edge_points, folds.nodes])
        BRepMesh_IncrementalMesh(faces, self.tolerance, False, MESH_ANGULAR_DEFLECTION, False)
        return np.concatenate([edge_samples(faces, self.tolerance, self.smooth_edges), mesh_folds(faces).nodes])

    @cached_property
    def outline(self) -> tuple[list[np.ndarray], Folds]:
        """Where a drawn line may lie: every edge (loose ones too) as a 3D polyline within the curve tolerance, and
        the folds of the mesh the poly algorithm uses (the silhouettes of curved faces, per view)."""
        return self.edge_lines.select(loose=True), mesh_folds(self._mesh())

    def _mesh(self) -> TopoDS_Shape:
        if not self._meshed:
            BRepMesh_IncrementalMesh(self.prepared.base, self.tolerance, False, MESH_ANGULAR_DEFLECTION, False)
            self._meshed = True
        return self.prepared.base

    def _exact(self, shape: TopoDS_Shape, direction: Direction, x_direction: Direction) -> ViewLines | None:
        try:
            compounds = run_exact(shape, direction, x_direction)
        except Exception:  # OCP maps each OCCT exception to its own class (not a Standard_Failure subclass)
            return None
        visible, hidden = view_polylines([compounds[k] for k in self.visible_names],
                                         [compounds[k] for k in self.hidden_names], self.tolerance)
        if not visible and self.drawable:
            return None
        return ViewLines(visible, hidden, HlrMethod.EXACT)

    def project_poly(self, direction: Direction, x_direction: Direction) -> ViewLines:
        compounds = run_poly(self._mesh(), direction, x_direction)
        visible, hidden = poly_view_polylines([compounds[k] for k in self.visible_names],
                                              [compounds[k] for k in self.hidden_names])
        return ViewLines(visible, hidden, HlrMethod.POLY)

    def project(self, direction: Direction, x_direction: Direction) -> ViewLines:
        """Visible and hidden polylines of one orthographic view."""
        if not self.drawable:
            return ViewLines([], [], self.method)
        if self.method is HlrMethod.EXACT:
            lines = self._exact(self.prepared.exact, direction, x_direction)
            if lines is None and self.prepared.split:
                lines = self._exact(self.prepared.base, direction, x_direction)
            if lines is not None:
                return lines
        return self.project_poly(direction, x_direction)


def exact_hlr_floor(shape: TopoDS_Shape, views: Sequence[tuple[Direction, Direction]]) -> float:
    """Seconds of bare OCCT exact HLR (Update + Hide + HLRToShape extraction) over ``views``.

    The benchmark's floor, on the shape exactly as ``HlrModel`` prepares it (fused, seams split):
    preparation happens before the clock starts, so the difference to ``HlrModel.project`` is
    spare_gen's own per-view cost.
    """
    prepared = prepare_shape(shape).exact
    start = time.perf_counter()
    for direction, x_direction in views:
        run_exact(prepared, direction, x_direction)
    return time.perf_counter() - start
