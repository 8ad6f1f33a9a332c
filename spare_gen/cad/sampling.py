"""Curves sampled as they are: polylines within a chordal deviation of the true curve, folds included.

OCCT's deflection samplers measure a sample's deviation from the line through a chord, not from the
chord itself. A curve whose projection runs out and back along one line (an edge seen edge-on: its
2D B-spline has collinear poles) has zero deviation from that line everywhere, so they return its two
end points and the part beyond them is lost. Here GCPnts_TangentialDeflection's points and every
continuity span cut into SPAN_SEEDS (or its degree) even pieces are the seeds, and every piece between
consecutive points is split until the curve at its quarter points lies within ``tolerance`` of the
piece as a segment (distance to the segment, not to its line), so a fold shows up as a deviation like
any bend. A degree-1 B-spline or Bezier (a polyline: every knot is a seed) is its seeds. Refinement
runs breadth-first, one numpy pass per round. The same sampler serves 2D (HLR result) and 3D (model
edge) adaptors. Measured: a B-spline face seen edge-on is drawn out to its fold
(tests/test_drawings_extent.py); drawing CSG models costs about 40% more CPU than the tangential
sampler alone (HLR itself is the rest).
"""

from __future__ import annotations

from itertools import chain

import numpy as np
from OCP.collections import Array1_double
from OCP.GCPnts import GCPnts_TangentialDeflection
from OCP.GeomAbs import GeomAbs_CurveType, GeomAbs_Shape
from OCP.gp import gp_Pnt, gp_Pnt2d

SPAN_SEEDS = 4  # even pieces per continuity span among the seeds (at least the span's degree)
ANGULAR_DEFLECTION = 0.5  # radians between the seed sampler's tangents; the chordal tolerance decides
MAX_ROUNDS = 12  # a seed piece is split at most this many times (into 4 each time)
MAX_POINTS = 20000  # per curve: a runaway curve (a huge loop) stops refining here
_PROBES = np.array([0.25, 0.5, 0.75])
_POLYNOMIAL = frozenset(t.value for t in (GeomAbs_CurveType.GeomAbs_BSplineCurve,
                                          GeomAbs_CurveType.GeomAbs_BezierCurve))


def _seed_parameters(curve, first: float, last: float, tolerance: float) -> np.ndarray:
    """GCPnts_TangentialDeflection's parameters and each C2 span's even cuts within [first, last], sorted."""
    sampler = GCPnts_TangentialDeflection(curve, first, last, ANGULAR_DEFLECTION, tolerance, 2)
    seeds = [first, last, *(sampler.Parameter(i) for i in range(1, sampler.NbPoints() + 1))]
    bounds = [first, last]
    n = curve.NbIntervals(GeomAbs_Shape.GeomAbs_C2)
    if n > 1:
        knots = Array1_double(1, n + 1)
        curve.Intervals(knots, GeomAbs_Shape.GeomAbs_C2)
        bounds = sorted({first, last, *(k for k in (knots.Value(i) for i in range(1, n + 2)) if first < k < last)})
    pieces = max(SPAN_SEEDS, curve.Degree() if curve.GetType().value in _POLYNOMIAL else 0)
    edges = np.asarray(bounds)
    seeds.extend((edges[:-1, None] + (edges[1:] - edges[:-1])[:, None] * np.arange(pieces)[None] / pieces).ravel())
    return np.unique(np.clip(np.asarray(seeds, dtype=float), first, last))


def _segment_distances(probes: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(k,) largest distance from each piece's probes (k, p, dim) to its segment a-b (k, dim), not its line."""
    ab = b - a
    den = np.maximum((ab * ab).sum(axis=1), 1e-300)
    t = np.clip(((probes - a[:, None]) * ab[:, None]).sum(axis=2) / den[:, None], 0.0, 1.0)
    return np.sqrt(((probes - a[:, None] - t[..., None] * ab[:, None]) ** 2).sum(axis=2)).max(axis=1)


def sample_curve(curve, first: float, last: float, tolerance: float, dim: int) -> np.ndarray:
    """(k, dim) points on ``curve`` (a 2D or 3D OCCT adaptor) from ``first`` to ``last``, in parameter order.

    Every piece between consecutive points stays within ``tolerance`` of the curve at its quarter
    points, measured to the piece as a segment; ``dim`` = 2 or 3 (the adaptor's dimension).
    """
    value, coord = curve.Value, (gp_Pnt2d if dim == 2 else gp_Pnt).Coord

    def values(ts: np.ndarray) -> np.ndarray:  # one OCCT evaluation per point, read straight into one array
        n = len(ts)
        return np.fromiter(chain.from_iterable(map(coord, map(value, ts.tolist()))), dtype=float,
                           count=n * dim).reshape(n, dim)

    params = _seed_parameters(curve, first, last, tolerance)
    points = values(params)
    if curve.GetType().value in _POLYNOMIAL and curve.Degree() == 1:
        return points  # a polyline: the seeds hold every knot, so each piece is straight and no probe can be off
    all_t, all_p = [params], [points]
    t0, t1, p0, p1 = params[:-1], params[1:], points[:-1], points[1:]
    for _ in range(MAX_ROUNDS):
        if not len(t0) or sum(len(t) for t in all_t) > MAX_POINTS:
            break
        probe_t = t0[:, None] + (t1 - t0)[:, None] * _PROBES[None]
        probes = values(probe_t.ravel()).reshape(len(t0), len(_PROBES), dim)
        bad = _segment_distances(probes, p0, p1) > tolerance
        if not bad.any():
            break
        all_t.append(probe_t[bad].ravel())
        all_p.append(probes[bad].reshape(-1, dim))
        ts = np.concatenate([t0[bad, None], probe_t[bad], t1[bad, None]], axis=1)  # (m, 5)
        ps = np.concatenate([p0[bad, None], probes[bad], p1[bad, None]], axis=1)  # (m, 5, dim)
        t0, t1 = ts[:, :-1].ravel(), ts[:, 1:].ravel()
        p0, p1 = ps[:, :-1].reshape(-1, dim), ps[:, 1:].reshape(-1, dim)
    t = np.concatenate(all_t)
    order = np.argsort(t, kind="stable")
    return np.concatenate(all_p)[order]
