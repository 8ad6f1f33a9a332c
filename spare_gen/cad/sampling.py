"""Curves sampled as they are: polylines within a chordal deviation of the true curve, folds included.

OCCT's deflection samplers measure a sample's deviation from the line through a chord, not from the
chord itself. A curve whose projection runs out and back along one line (an edge seen edge-on: its
2D B-spline has collinear poles) has zero deviation from that line everywhere, so they return its two
end points and the part beyond them is lost. Here every continuity span is seeded with several points
and each piece is split until the curve at its quarter points lies within ``tolerance`` of the piece
as a segment (distance to the segment, not to its line), so a fold shows up as a deviation like any
bend. The same sampler serves 2D (HLR result) and 3D (model edge) adaptors.
"""

from __future__ import annotations

import numpy as np
from OCP.collections import Array1_double
from OCP.GeomAbs import GeomAbs_CurveType, GeomAbs_Shape

SPAN_SEEDS = 4  # pieces per continuity span before refinement (at least the span's degree)
MAX_DEPTH = 12  # a piece is split at most this many times (4**12 pieces of one seed piece)
MAX_POINTS = 20000  # per curve: a runaway curve (a huge loop) stops refining here
_PROBES = np.array([0.25, 0.5, 0.75])
_POLYNOMIAL = frozenset(t.value for t in (GeomAbs_CurveType.GeomAbs_BSplineCurve,
                                          GeomAbs_CurveType.GeomAbs_BezierCurve))


def _seed_parameters(curve, first: float, last: float) -> list[float]:
    """Span boundaries (C2 intervals) within [first, last], each span cut into max(SPAN_SEEDS, degree) pieces."""
    n = curve.NbIntervals(GeomAbs_Shape.GeomAbs_C2)
    bounds = [first, last]
    if n > 1:
        knots = Array1_double(1, n + 1)
        curve.Intervals(knots, GeomAbs_Shape.GeomAbs_C2)
        bounds = sorted({first, last, *(k for k in (knots.Value(i) for i in range(1, n + 2)) if first < k < last)})
    pieces = max(SPAN_SEEDS, curve.Degree() if curve.GetType().value in _POLYNOMIAL else 0)
    out = [first]
    for a, b in zip(bounds[:-1], bounds[1:]):
        out.extend(a + (b - a) * k / pieces for k in range(1, pieces + 1))
    out[-1] = last
    return out


def _segment_distance(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance from ``points`` to the segment a-b (not its line)."""
    ab = b - a
    den = float(ab @ ab)
    t = np.clip((points - a) @ ab / den, 0.0, 1.0) if den > 0 else np.zeros(len(points))
    return float(np.sqrt(((points - (a + t[:, None] * ab)) ** 2).sum(axis=1)).max())


def sample_curve(curve, first: float, last: float, tolerance: float, dim: int) -> np.ndarray:
    """(k, dim) points on ``curve`` (a 2D or 3D OCCT adaptor) from ``first`` to ``last``.

    Every piece between consecutive points stays within ``tolerance`` of the curve at its quarter
    points, measured to the piece as a segment; ``dim`` = 2 or 3 (the adaptor's dimension).
    """
    def value(t: float) -> np.ndarray:
        return np.array(curve.Value(t).Coord()[:dim])

    params = _seed_parameters(curve, first, last)
    points = [value(t) for t in params]
    out_t, out_p = [params[0]], [points[0]]
    # depth-first over the seed pieces, left to right: the output stays in parameter order
    stack = [(params[i], points[i], params[i + 1], points[i + 1], 0) for i in range(len(params) - 2, -1, -1)]
    while stack:
        t0, p0, t1, p1, depth = stack.pop()
        probes_t = t0 + (t1 - t0) * _PROBES
        probes = np.array([value(t) for t in probes_t])
        if (depth < MAX_DEPTH and len(out_p) + len(stack) < MAX_POINTS
                and _segment_distance(probes, p0, p1) > tolerance):
            ts = [t0, *probes_t, t1]
            ps = [p0, *probes, p1]
            stack.extend((ts[i], ps[i], ts[i + 1], ps[i + 1], depth + 1) for i in range(3, -1, -1))
            continue
        out_t.append(t1)
        out_p.append(p1)
    return np.array(out_p)
