"""Turn HLR result compounds (planar 2D edges) into numpy polylines, with a chordal tolerance.

HLRBRep builds its result edges on the XY plane from 2D curves only, so we read the 2D curve
directly (no 3D curve rebuild). Lines become two points; circles and ellipses are sampled in numpy
from their closed form; other curves (B-splines of silhouettes, intersections and free-form edges)
go through ``sampling.sample_curves`` (all of a view's at once), which measures deviation from each
chord as a segment. (OCCT's deflection samplers measure it from the chord's line:
GCPnts_QuasiUniformDeflection turns some degree-8 HLR B-splines into a single chord, 30x over the
tolerance, and GCPnts_TangentialDeflection turns an edge seen edge-on, whose projection runs out
and back along one line, into its two end points, cutting the overhang off.)
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable, NamedTuple

import numpy as np
from OCP.BRep import BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve2d
from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace
from OCP.BRepLib import BRepLib
from OCP.GeomAbs import GeomAbs_CurveType
from OCP.gp import gp_Pnt
from OCP.TopAbs import TopAbs_EDGE
from OCP.TopExp import TopExp, TopExp_Explorer
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.compat import to_edge
from spare_gen.cad.cover2d import uncovered_arcs, uncovered_segments
from spare_gen.cad.lines2d import (
    ConicSpec,
    chain_segments,
    conic_steps,
    drop_points_and_repeats,
    evaluate_conics,
    straighten,
)
from spare_gen.cad.sampling import sample_curves

_PLANE = BRepLib.Plane_s()  # the plane HLRBRep_HLRToShape / BRepLib_MakeEdge2d put 2D edges on
_FACE = BRepBuilderAPI_MakeFace(_PLANE, 1e-7).Face()  # that plane as a face, for BRepAdaptor_Curve2d
# curve types as ints (pybind11 makes a new enum object per call: compare values, not identities)
_LINE, _CIRCLE, _ELLIPSE, _OTHER = (t.value for t in (GeomAbs_CurveType.GeomAbs_Line, GeomAbs_CurveType.GeomAbs_Circle,
                                                      GeomAbs_CurveType.GeomAbs_Ellipse,
                                                      GeomAbs_CurveType.GeomAbs_OtherCurve))
COINCIDENCE = 0.05  # lines closer than this fraction of the curve tolerance coincide (~0.01 px at defaults)


def _edges(compound: TopoDS_Shape) -> list:
    """The compound's edges in exploration order (a list: no generator frame per edge)."""
    if compound is None or compound.IsNull():
        return []
    exp = TopExp_Explorer(compound, TopAbs_EDGE)
    more, current, step = exp.More, exp.Current, exp.Next  # bound once: some 300 edges a view
    shapes: list = []
    add = shapes.append
    while more():
        add(current())
        step()
    return list(map(to_edge, shapes))


def _conic_spec(centre, xd, yd, a: float, b: float, first: float, last: float, tolerance: float) -> ConicSpec:
    (cx, cy), (xx, xy), (yx, yy) = centre.Coord(), xd.Coord(), yd.Coord()  # Coord(): one call per pair
    return ConicSpec(cx, cy, a * xx, a * xy, b * yx, b * yy, first, last, conic_steps(a, abs(last - first), tolerance))


def _chord(curve, first: float, last: float) -> np.ndarray:
    return np.array((curve.Value(first).Coord(), curve.Value(last).Coord()))


class _Pending(NamedTuple):
    """A curve left for ``sampling.sample_curves`` (all of a view's are sampled together)."""

    curve: BRepAdaptor_Curve2d
    first: float
    last: float


def edge_geometry(edge, tolerance: float) -> np.ndarray | ConicSpec | _Pending | None:
    """Points along one planar HLR edge, a ConicSpec for circles and ellipses, a ``_Pending`` curve to sample (any
    other curve), or None without a 2D curve.

    One BRepAdaptor_Curve2d per edge on the XY plane's face: its type, parameters and conic data come
    back as plain values (returning the Geom2d curve handle itself costs ~4 us per edge in OCP, more
    than the rest of the work on a line); this runs for every edge of every view.
    """
    curve = BRepAdaptor_Curve2d(edge, _FACE)
    kind = curve.GetType().value
    first, last = curve.FirstParameter(), curve.LastParameter()
    if kind == _LINE:
        return _chord(curve, first, last)
    if kind == _CIRCLE:
        circle = curve.Circle()
        r = circle.Radius()
        return _conic_spec(circle.Location(), circle.XAxis().Direction(), circle.YAxis().Direction(), r, r,
                           first, last, tolerance)
    if kind == _ELLIPSE:
        ellipse = curve.Ellipse()
        return _conic_spec(ellipse.Location(), ellipse.XAxis().Direction(), ellipse.YAxis().Direction(),
                           ellipse.MajorRadius(), ellipse.MinorRadius(), first, last, tolerance)
    if kind == _OTHER and curve.Curve() is None:  # no curve on the plane (an unloaded adaptor says "other")
        return None
    return _Pending(curve, first, last)


def _view_items(groups: Iterable[Iterable[TopoDS_Shape]], tolerance: float) -> list[list]:
    """Each group's items (polylines and ConicSpecs), its edges in exploration order; every group's other curves
    sampled together in one ``sample_curves`` call."""
    geometries = [[edge_geometry(edge, tolerance) for compound in compounds for edge in _edges(compound)]
                  for compounds in groups]
    slots = [(g, i) for g, group in enumerate(geometries) for i, item in enumerate(group) if isinstance(item, _Pending)]
    for (g, i), points in zip(slots, sample_curves([geometries[g][i] for g, i in slots], tolerance, 2)):
        geometries[g][i] = points
    return [[item for item in group if isinstance(item, ConicSpec) or (item is not None and len(item) >= 2)]
            for group in geometries]


def _realise(items: list) -> list[np.ndarray]:
    """Items (polylines and ConicSpecs) to polylines, order kept, conics sampled in one pass."""
    slots = [i for i, item in enumerate(items) if isinstance(item, ConicSpec)]
    out = list(items)
    for i, points in zip(slots, evaluate_conics([items[i] for i in slots])):
        out[i] = points
    return out


def view_polylines(visible: Iterable[TopoDS_Shape], hidden: Iterable[TopoDS_Shape],
                   tolerance: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Visible and hidden polylines of one HLR view, in exploration order (deterministic for a shape).

    Flat curves become segments; hidden segments and arcs lying on visible ones are trimmed
    (``cover2d``); points and exact repeats within a group are dropped.
    """
    eps = COINCIDENCE * tolerance
    vis_items, hid_items = _view_items([visible, hidden], tolerance)
    vis_conics = [v for v in vis_items if isinstance(v, ConicSpec)]
    vis_lines = straighten([v for v in vis_items if not isinstance(v, ConicSpec)], eps)
    vis_segments = np.array([v for v in vis_lines if len(v) == 2]).reshape(-1, 2, 2)
    hid_lines = straighten([h for h in hid_items if not isinstance(h, ConicSpec)], eps)
    hid_segment_idx = [i for i, h in enumerate(hid_lines) if len(h) == 2]
    pieces = uncovered_segments(np.array([hid_lines[i] for i in hid_segment_idx]).reshape(-1, 2, 2), vis_segments,
                                eps, tolerance)
    trimmed: dict[int, list] = dict(zip(hid_segment_idx, pieces))
    hidden_out: list = []
    k = 0
    for item in hid_items:
        if isinstance(item, ConicSpec):
            hidden_out.extend(uncovered_arcs(item, vis_conics, eps, tolerance))
        else:
            hidden_out.extend(trimmed.get(k, [hid_lines[k]]))
            k += 1
    k = 0
    visible_out = []
    for item in vis_items:
        if isinstance(item, ConicSpec):
            visible_out.append(item)
        else:
            visible_out.append(vis_lines[k])
            k += 1
    lines = _realise(visible_out + hidden_out)
    groups = [0] * len(visible_out) + [1] * len(hidden_out)
    keep = drop_points_and_repeats(lines, tolerance * 1e-3, groups)
    return [lines[i] for i in keep if groups[i] == 0], [lines[i] for i in keep if groups[i] == 1]


def compound_polylines(compounds: Iterable[TopoDS_Shape], tolerance: float) -> list[np.ndarray]:
    """Polylines of every edge in the compounds (no visibility trimming), points and repeats dropped."""
    lines = _realise(_view_items([compounds], tolerance)[0])
    return [lines[i] for i in drop_points_and_repeats(lines, tolerance * 1e-3)]


def _segments(compounds: Iterable[TopoDS_Shape]) -> list:
    """Each mesh-HLR edge's (first, last) vertex points in the XY plane, in exploration order; edges whose two
    points coincide are left out.

    HLRBRep_PolyHLRToShape builds every edge from two points (BRepLib_MakeEdge2d: a FORWARD vertex, then a
    REVERSED one), so TopExp's first and last vertex are the edge's two vertices in their stored order. They are
    read with map chains and one ``np.fromiter`` (about 300 edges a view on CSG models; 6 OCP calls an edge, no
    Python frame per call), not with a vertex explorer per edge (17 calls an edge): the same floats. An edge without
    two vertices (none seen: BRep_Tool.Pnt raises on its null vertex) is left out, as before.
    """
    edges = [edge for compound in compounds for edge in _edges(compound)]
    firsts = list(map(TopExp.FirstVertex_s, edges))
    lasts = list(map(TopExp.LastVertex_s, edges))
    try:
        xyz = _vertex_points(firsts, lasts)
    except Exception:  # OCP maps each OCCT exception to its own class
        whole = [not (a.IsNull() or b.IsNull()) for a, b in zip(firsts, lasts)]
        xyz = _vertex_points([v for v, ok in zip(firsts, whole) if ok], [v for v, ok in zip(lasts, whole) if ok])
    points = list(map(tuple, xyz[:, :2].tolist()))
    return [segment for segment in zip(points[0::2], points[1::2]) if segment[0] != segment[1]]


def _vertex_points(firsts: list, lasts: list) -> np.ndarray:
    """(2 n, 3) the points of first[0], last[0], first[1], ... (vertices), in one array."""
    vertices = chain.from_iterable(zip(firsts, lasts))
    return np.fromiter(chain.from_iterable(map(gp_Pnt.Coord, map(BRep_Tool.Pnt_s, vertices))), dtype=float,
                       count=6 * len(firsts)).reshape(-1, 3)


def poly_view_polylines(visible: Iterable[TopoDS_Shape],
                        hidden: Iterable[TopoDS_Shape]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Visible and hidden polylines of one mesh-HLR view; hidden mesh segments identical to visible ones
    (same projected mesh nodes, e.g. a box's back edges in the front view) are dropped."""
    vis, hid = _segments(visible), _segments(hidden)
    on_visible = {frozenset(seg) for seg in vis}
    return chain_segments(vis), chain_segments([seg for seg in hid if frozenset(seg) not in on_visible])
