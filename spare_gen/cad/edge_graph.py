"""B-rep edges as a raw 3D graph (OCP side): B-rep vertices, curved edges as chains of segments.

``spare_gen.stages.pool.child`` interprets the graph (merging, normalising, point kinds); this module
imports nothing above ``spare_gen.cad``.

Which B-rep edges become wireframe lines:

* straight edges: one segment between their two vertices;
* curved edges (circles, ellipses, splines...): a chain of segments whose chord error is at most the
  deflection (``GCPnts_QuasiUniformDeflection`` on ``BRepAdaptor_Curve``); inner points are on_curve
  vertices. A closed edge (a full circle: one vertex at both ends) becomes a closed chain through
  that vertex with at least :data:`MIN_CLOSED_SEGMENTS` segments;
* dropped (counted by :class:`DropReason`): degenerate edges (sphere poles, cone apexes), seams
  (an edge closed on one face, e.g. the line where a cylinder's face meets itself) and split lines
  (an edge between two patches of one surface: ``BRepLib.EncodeRegularity`` marks it CN). Seams and
  split lines are bookkeeping of the parametrisation, not feature lines: a CAD wireframe or line
  drawing does not show them, and which of them a file has depends on the exporter. Tangent (G1)
  edges, e.g. fillet boundaries, are kept: CAD drawings show them. Zero-length edges are dropped;
* loose edges (edges that bound no face: datum axes, construction lines) are kept like any other edge: the
  wireframe is the B-rep's edges. The drawings leave them out unless ``render.loose_edges``.

B-rep vertices are merged by shape identity (``IsSame``) here, and by distance afterwards (non-sewn
faces of STEP exports repeat their vertices); vertices on no kept edge (a cone's apex) are dropped,
since a rater sees only lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from OCP.BRep import BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve
from OCP.BRepLib import BRepLib
from OCP.GCPnts import GCPnts_QuasiUniformDeflection
from OCP.GeomAbs import GeomAbs_CN, GeomAbs_Line
from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_VERTEX
from OCP.TopExp import TopExp
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.compat import IndexedShapeMap, to_edge, to_face, to_vertex

try:  # OCP >= 8.0
    from OCP.collections import (
        IndexedDataMap_TopoDS_Shape_List_TopoDS_Shape_TopTools_ShapeMapHasher as EdgeFacesMap,
    )
except ImportError:  # pragma: no cover - OCP 7.x
    from OCP.TopTools import TopTools_IndexedDataMapOfShapeListOfShape as EdgeFacesMap  # type: ignore

MIN_CLOSED_SEGMENTS = 3  # a closed edge drawn with fewer segments would collapse to a line or a point
REGULARITY_ANGLE = 1e-10  # radians; EncodeRegularity's tangency tolerance (only CN = same surface is used)


class DropReason(str, Enum):
    """Why a B-rep edge has no line in the wireframe."""

    DEGENERATE = "degenerate"
    SEAM = "seam"
    SPLIT = "split"
    ZERO_LENGTH = "zero_length"
    FAILED = "failed"  # OCCT could not evaluate the edge's curve


@dataclass(frozen=True)
class BrepGraph:
    """Graph points in model units before distance merging: ``points`` (N, 3), ``on_curve`` (N,) bool (True:
    an inner point of a discretised curved edge, False: a B-rep vertex or a chain end), ``edges`` (M, 2),
    and the count of dropped B-rep edges per :class:`DropReason` value."""

    points: np.ndarray
    on_curve: np.ndarray
    edges: np.ndarray
    dropped: dict[str, int]


def _pnt(p) -> tuple[float, float, float]:
    return (p.X(), p.Y(), p.Z())


def _is_parametric_only(edge, faces: list) -> DropReason | None:
    """SEAM or SPLIT when the edge only marks the surface parametrisation, else None."""
    if any(BRep_Tool.IsClosed_s(edge, face) for face in faces):
        return DropReason.SEAM
    if len(faces) == 2 and not faces[0].IsSame(faces[1]):
        f1, f2 = faces
        if BRep_Tool.HasContinuity_s(edge, f1, f2) and BRep_Tool.Continuity_s(edge, f1, f2) == GeomAbs_CN:
            return DropReason.SPLIT
    return None


def _curve_points(curve: BRepAdaptor_Curve, deflection: float, closed: bool) -> np.ndarray:
    """Points along the edge from its first to its last parameter (both ends included)."""
    u1, u2 = curve.FirstParameter(), curve.LastParameter()
    if curve.GetType() == GeomAbs_Line:
        return np.array([_pnt(curve.Value(u1)), _pnt(curve.Value(u2))])
    sampler = GCPnts_QuasiUniformDeflection(curve, deflection, u1, u2)
    if sampler.IsDone() and sampler.NbPoints() >= (MIN_CLOSED_SEGMENTS + 1 if closed else 2):
        return np.array([_pnt(sampler.Value(i)) for i in range(1, sampler.NbPoints() + 1)])
    n = MIN_CLOSED_SEGMENTS if closed else 1
    return np.array([_pnt(curve.Value(u)) for u in np.linspace(u1, u2, n + 1)])


class _GraphBuilder:
    """Collects points (B-rep vertices first, by identity) and the chains of segments between them."""

    def __init__(self, shape: TopoDS_Shape) -> None:
        self.vertex_map = IndexedShapeMap()
        TopExp.MapShapes_s(shape, TopAbs_VERTEX, self.vertex_map)
        self.points: list[tuple[float, float, float]] = [
            _pnt(BRep_Tool.Pnt_s(to_vertex(self.vertex_map.FindKey(i))))
            for i in range(1, self.vertex_map.Extent() + 1)
        ]
        self.on_curve: list[bool] = [False] * len(self.points)
        self.edges: list[tuple[int, int]] = []

    def _end(self, vertex, point: np.ndarray) -> int:
        """Index of a chain end: its B-rep vertex, or a new corner when the edge has none."""
        if not vertex.IsNull():
            index = self.vertex_map.FindIndex(vertex)
            if index > 0:
                return index - 1
        self.points.append(tuple(point))
        self.on_curve.append(False)
        return len(self.points) - 1

    def add_chain(self, edge, pts: np.ndarray, closed: bool) -> None:
        first, last = TopExp.FirstVertex_s(edge), TopExp.LastVertex_s(edge)
        if not first.IsNull() and not last.IsNull() and not closed:
            # the FORWARD vertex should sit at the first parameter; trust geometry if a file says otherwise
            p_first = np.array(_pnt(BRep_Tool.Pnt_s(first)))
            if np.linalg.norm(p_first - pts[0]) > np.linalg.norm(p_first - pts[-1]):
                first, last = last, first
        a = self._end(first, pts[0])
        b = a if closed else self._end(last, pts[-1])
        inner = list(range(len(self.points), len(self.points) + len(pts) - 2))
        self.points.extend(map(tuple, pts[1:-1]))
        self.on_curve.extend([True] * len(inner))
        chain = [a, *inner, b]
        self.edges.extend(zip(chain[:-1], chain[1:]))


def brep_graph(
    shape: TopoDS_Shape, deflection: float, *, keep_seams: bool = False, min_length: float = 0.0
) -> BrepGraph:
    """The wireframe graph of ``shape`` in model units; ``deflection`` and ``min_length`` in model units too."""
    if deflection <= 0:
        raise ValueError(f"deflection {deflection!r} must be positive")
    BRepLib.EncodeRegularity_s(shape, REGULARITY_ANGLE)  # marks split lines CN (sets flags only)
    edge_faces = EdgeFacesMap()
    TopExp.MapShapesAndAncestors_s(shape, TopAbs_EDGE, TopAbs_FACE, edge_faces)
    builder = _GraphBuilder(shape)
    dropped = {reason.value: 0 for reason in DropReason}
    for i in range(1, edge_faces.Extent() + 1):
        edge = to_edge(edge_faces.FindKey(i))
        reason = None
        if BRep_Tool.Degenerated_s(edge):
            reason = DropReason.DEGENERATE
        elif not keep_seams:
            reason = _is_parametric_only(edge, [to_face(f) for f in edge_faces.FindFromIndex(i)])
        if reason is None:
            try:
                first, last = TopExp.FirstVertex_s(edge), TopExp.LastVertex_s(edge)
                closed = not first.IsNull() and first.IsSame(last)
                pts = _curve_points(BRepAdaptor_Curve(edge), deflection, closed)
            except Exception:  # OCCT raises Standard_Failure for an edge without usable geometry
                reason = DropReason.FAILED
            else:
                if np.linalg.norm(np.diff(pts, axis=0), axis=1).sum() <= min_length:
                    reason = DropReason.ZERO_LENGTH
                else:
                    builder.add_chain(edge, pts, closed)
        if reason is not None:
            dropped[reason.value] += 1
    return BrepGraph(
        np.asarray(builder.points, dtype=np.float64).reshape(-1, 3),
        np.asarray(builder.on_curve, dtype=bool),
        np.asarray(builder.edges, dtype=np.int64).reshape(-1, 2),
        dropped,
    )

