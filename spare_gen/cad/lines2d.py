"""2D line-drawing geometry in numpy (no OCCT): conic arcs, straightening, de-duplication, chaining.

Everything here works on one view at a time and is vectorised over the view's lines, because it
runs for every view of every model: a few numpy calls per view, not per line.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

MAX_CONIC_SEGMENTS = 4096


class ConicSpec(NamedTuple):
    """A circle or ellipse arc ``c + A cos(t) + B sin(t)``, t from ``first`` to ``last``, in ``steps`` chords."""

    cx: float
    cy: float
    ax: float  # A = major radius x X axis
    ay: float
    bx: float  # B = minor radius x Y axis
    by: float
    first: float
    last: float
    steps: int

    @property
    def major(self) -> float:
        return max(math.hypot(self.ax, self.ay), math.hypot(self.bx, self.by))

    def with_range(self, first: float, last: float) -> "ConicSpec":
        """The same curve over [first, last], with chords as long as before."""
        span = abs(self.last - self.first)
        steps = max(1, math.ceil(self.steps * abs(last - first) / span)) if span > 0 else 1
        return self._replace(first=first, last=last, steps=steps)


def conic_steps(major_radius: float, span: float, tolerance: float) -> int:
    """Chords so a circle of ``major_radius`` deviates at most ``tolerance`` over ``span`` radians.

    An ellipse is an affine shrink of its major circle, so the same parameter step bounds its error too.
    """
    if major_radius <= tolerance:
        return max(1, math.ceil(span / (math.pi / 2)))
    step = 2.0 * math.acos(1.0 - tolerance / major_radius)
    return int(min(MAX_CONIC_SEGMENTS, max(1, math.ceil(span / step))))


def split_points(points: np.ndarray, lengths: list[int]) -> list[np.ndarray]:
    ends = np.cumsum(lengths).tolist()
    return [points[a:b] for a, b in zip([0] + ends[:-1], ends)]


def evaluate_conics(specs: list[ConicSpec]) -> list[np.ndarray]:
    """Sample many conic arcs in one numpy pass (a view has dozens; per-arc numpy calls would dominate)."""
    if not specs:
        return []
    p = np.array(specs, dtype=float)
    counts = p[:, 8].astype(np.int64) + 1
    ends = np.cumsum(counts)
    owner = np.repeat(np.arange(len(specs)), counts)
    local = np.arange(ends[-1]) - np.repeat(ends - counts, counts)
    q = p[owner]
    t = q[:, 6] + (q[:, 7] - q[:, 6]) * (local / q[:, 8])
    c, s = np.cos(t), np.sin(t)
    pts = np.column_stack([q[:, 0] + q[:, 2] * c + q[:, 4] * s, q[:, 1] + q[:, 3] * c + q[:, 5] * s])
    return split_points(pts, counts.tolist())


def _straight_segment(pts: list, eps: float) -> list | None:
    """The 2-point segment spanning ``pts`` ([[x, y], ...]) if every point lies within ``eps`` of the line
    from the first point to the farthest one, else None."""
    x0, y0 = pts[0]
    vec = [(x - x0, y - y0) for x, y in pts]
    d2 = [vx * vx + vy * vy for vx, vy in vec]
    far = max(d2)
    if not far > 0.0:  # a point (or NaN)
        return None
    norm = math.sqrt(far)
    fx, fy = vec[d2.index(far)]
    ux, uy = fx / norm, fy / norm
    for vx, vy in vec:
        if not abs(ux * vy - uy * vx) <= eps:  # NaN is not straight either
            return None
    ts = [ux * vx + uy * vy for vx, vy in vec]
    tmin, tmax = min(ts), max(ts)
    return [[x0 + ux * tmin, y0 + uy * tmin], [x0 + ux * tmax, y0 + uy * tmax]]


def straighten(lines: list[np.ndarray], eps: float) -> list[np.ndarray]:
    """Polylines lying within ``eps`` of one straight line become that 2-point segment.

    HLR returns circles seen edge-on as flat B-splines (possibly out and back along the same line);
    as segments they are exact, compact, and comparable with other straight lines. Only sampled curves
    (more than two points, a few per view and a few points each) are looked at, in plain Python:
    a vectorised pass costs more in numpy calls than it saves.
    """
    out = None
    for i, line in enumerate(lines):
        if len(line) <= 2:  # 2-point lines are straight already
            continue
        segment = _straight_segment(np.asarray(line, dtype=float).tolist(), eps)
        if segment is not None:
            out = list(lines) if out is None else out
            out[i] = np.array(segment)
    return lines if out is None else out


def drop_points_and_repeats(lines: list[np.ndarray], quantum: float, groups: list[int] | None = None) -> list[int]:
    """Indices of the lines to keep: not spanning less than ``quantum``, not a repeat (same points, either
    direction) of an earlier line of the same group. Bounding boxes in one pass; full comparisons only
    for equal boxes.
    """
    if not lines:
        return []
    lengths = np.fromiter((len(line) for line in lines), dtype=np.int64, count=len(lines))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    points = np.concatenate(lines)
    lo, hi = np.minimum.reduceat(points, starts), np.maximum.reduceat(points, starts)
    keep = (hi - lo).max(axis=1) >= quantum
    boxes = np.round(np.column_stack([lo, hi]) / quantum).astype(np.int64)

    def quantised(i: int) -> np.ndarray:
        return np.round(lines[i] / quantum).astype(np.int64)

    out, with_box = [], {}
    box_rows, n_points = boxes.tolist(), lengths.tolist()  # plain ints: one conversion for the view
    for i in np.flatnonzero(keep).tolist():
        box = (groups[i] if groups else 0, *box_rows[i], n_points[i])
        earlier = with_box.get(box)
        if earlier is not None:
            q = quantised(i)
            if any(np.array_equal(q, quantised(j)) or np.array_equal(q[::-1], quantised(j)) for j in earlier):
                continue
            earlier.append(i)
        else:
            with_box[box] = [i]
        out.append(i)
    return out


def chain_segments(segments: list[tuple[tuple[float, float], tuple[float, float]]]) -> list[np.ndarray]:
    """Join segments sharing exact end points into polylines (greedy, in input order: deterministic).

    Every polyline's points go into one list and one array, which is then sliced (one conversion a view, not one
    per polyline)."""
    ends: dict[tuple[float, float], list[int]] = {}
    for i, (a, b) in enumerate(segments):
        ends.setdefault(a, []).append(i)
        ends.setdefault(b, []).append(i)
    used = [False] * len(segments)

    def extend(path: list, point) -> None:
        while True:
            for nxt in ends[point]:  # every end point is a key
                if not used[nxt]:
                    break
            else:
                return
            used[nxt] = True
            a, b = segments[nxt]
            point = b if a == point else a
            path.append(point)

    points: list = []
    bounds = [0]
    for i, (a, b) in enumerate(segments):
        if used[i]:
            continue
        used[i] = True
        forward, backward = [a, b], [a]
        extend(forward, b)
        extend(backward, a)
        backward.reverse()
        points += backward[:-1]
        points += forward
        bounds.append(len(points))
    stacked = np.array(points, dtype=float).reshape(-1, 2)
    return [stacked[start:end] for start, end in zip(bounds[:-1], bounds[1:])]
