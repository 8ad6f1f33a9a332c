"""Turn HLR result compounds (planar 2D edges) into numpy polylines, with a chordal tolerance.

HLRBRep builds its result edges on the XY plane from 2D curves only, so we read the 2D curve
directly (no 3D curve rebuild). Lines become two points; circles and ellipses are sampled in numpy
from their closed form; other curves (B-splines of silhouettes) go through GCPnts.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
from OCP.BRep import BRep_Tool
from OCP.BRepLib import BRepLib
from OCP.GCPnts import GCPnts_QuasiUniformDeflection
from OCP.Geom2dAdaptor import Geom2dAdaptor_Curve
from OCP.GeomAbs import GeomAbs_CurveType
from OCP.TopAbs import TopAbs_EDGE, TopAbs_VERTEX
from OCP.TopExp import TopExp_Explorer
from OCP.TopLoc import TopLoc_Location
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.compat import to_edge, to_vertex

_PLANE = BRepLib.Plane_s()  # the plane HLRBRep_HLRToShape / BRepLib_MakeEdge2d put 2D edges on
_LOCATION = TopLoc_Location()
_LINE = GeomAbs_CurveType.GeomAbs_Line
_CIRCLE = GeomAbs_CurveType.GeomAbs_Circle
_ELLIPSE = GeomAbs_CurveType.GeomAbs_Ellipse
MAX_CONIC_SEGMENTS = 4096


def _edges(compound: TopoDS_Shape) -> Iterable:
    if compound is None or compound.IsNull():
        return
    exp = TopExp_Explorer(compound, TopAbs_EDGE)
    while exp.More():
        yield to_edge(exp.Current())
        exp.Next()


def conic_steps(major_radius: float, span: float, tolerance: float) -> int:
    """Segments so the chord of a circle of ``major_radius`` deviates at most ``tolerance`` over ``span`` rad.

    An ellipse is an affine shrink of its major circle, so the same parameter step bounds its error too.
    """
    if major_radius <= tolerance:
        return max(1, math.ceil(span / (math.pi / 2)))
    step = 2.0 * math.acos(1.0 - tolerance / major_radius)
    return int(min(MAX_CONIC_SEGMENTS, max(1, math.ceil(span / step))))


def _conic(adaptor: Geom2dAdaptor_Curve, kind, first: float, last: float, tolerance: float) -> np.ndarray:
    if kind == _CIRCLE:
        geom = adaptor.Circle()
        a = b = geom.Radius()
    else:
        geom = adaptor.Ellipse()
        a, b = geom.MajorRadius(), geom.MinorRadius()
    centre = geom.Location()
    xd, yd = geom.XAxis().Direction(), geom.YAxis().Direction()
    t = np.linspace(first, last, conic_steps(a, abs(last - first), tolerance) + 1)
    ca, sb = a * np.cos(t), b * np.sin(t)
    return np.column_stack([centre.X() + ca * xd.X() + sb * yd.X(), centre.Y() + ca * xd.Y() + sb * yd.Y()])


def edge_polyline(edge, tolerance: float) -> np.ndarray | None:
    """(k, 2) points along one planar HLR edge, or None if the edge carries no 2D curve."""
    curve = BRep_Tool.CurveOnSurface_s(edge, _PLANE, _LOCATION, 0.0, 0.0)
    if curve is None:
        return None
    first, last = BRep_Tool.Range_s(edge, _PLANE, _LOCATION)
    adaptor = Geom2dAdaptor_Curve(curve, first, last)
    kind = adaptor.GetType()
    if kind == _LINE:
        p, q = adaptor.Value(first), adaptor.Value(last)
        return np.array([[p.X(), p.Y()], [q.X(), q.Y()]])
    if kind == _CIRCLE or kind == _ELLIPSE:
        return _conic(adaptor, kind, first, last, tolerance)
    sampler = GCPnts_QuasiUniformDeflection(adaptor, tolerance, first, last)
    if not sampler.IsDone() or sampler.NbPoints() < 2:
        p, q = adaptor.Value(first), adaptor.Value(last)
        return np.array([[p.X(), p.Y()], [q.X(), q.Y()]])
    pts = [sampler.Value(i) for i in range(1, sampler.NbPoints() + 1)]
    return np.array([[p.X(), p.Y()] for p in pts])


def compound_polylines(compounds: Iterable[TopoDS_Shape], tolerance: float) -> list[np.ndarray]:
    """Polylines of every edge in the compounds, in exploration order (deterministic for a given shape)."""
    out = []
    for compound in compounds:
        for edge in _edges(compound):
            line = edge_polyline(edge, tolerance)
            if line is not None and len(line) >= 2:
                out.append(line)
    return out


def _edge_segment(edge) -> tuple[tuple[float, float], tuple[float, float]] | None:
    exp = TopExp_Explorer(edge, TopAbs_VERTEX)
    pts = []
    while exp.More() and len(pts) < 2:
        p = BRep_Tool.Pnt_s(to_vertex(exp.Current()))
        pts.append((p.X(), p.Y()))
        exp.Next()
    return (pts[0], pts[1]) if len(pts) == 2 else None


def chain_segments(segments: list[tuple[tuple[float, float], tuple[float, float]]]) -> list[np.ndarray]:
    """Join segments sharing exact end points into polylines (greedy, in input order: deterministic)."""
    ends: dict[tuple[float, float], list[int]] = {}
    for i, (a, b) in enumerate(segments):
        ends.setdefault(a, []).append(i)
        ends.setdefault(b, []).append(i)
    used = [False] * len(segments)

    def extend(path: list, point) -> None:
        while True:
            nxt = next((j for j in ends.get(point, ()) if not used[j]), None)
            if nxt is None:
                return
            used[nxt] = True
            a, b = segments[nxt]
            point = b if a == point else a
            path.append(point)

    out = []
    for i, (a, b) in enumerate(segments):
        if used[i]:
            continue
        used[i] = True
        forward, backward = [a, b], [a]
        extend(forward, b)
        extend(backward, a)
        out.append(np.array(backward[::-1][:-1] + forward, dtype=float))
    return out


def segments_to_polylines(compounds: Iterable[TopoDS_Shape]) -> list[np.ndarray]:
    """HLRBRep_PolyHLRToShape output (one straight edge per mesh segment) chained into polylines."""
    segments = []
    for compound in compounds:
        for edge in _edges(compound):
            seg = _edge_segment(edge)
            if seg is not None and seg[0] != seg[1]:
                segments.append(seg)
    return chain_segments(segments)
