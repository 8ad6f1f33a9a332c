"""Hidden lines lying under visible ones are not drawn, as in engineering drawings (numpy, no OCCT).

HLR reports a box's back edges as hidden even in the front view, where they project exactly onto
the front edges; likewise the far rim of a hole seen along its axis. Drafting convention (and
SPARE3D's drawings) show only the visible line there. Coincidence is exact geometry for straight
segments and for circle/ellipse arcs, so both are trimmed exactly: a hidden segment loses the
parameter intervals covered by collinear visible segments, a hidden arc those covered by visible
arcs of the same conic.
"""

from __future__ import annotations

import math

import numpy as np

from spare_gen.cad.lines2d import ConicSpec

TWO_PI = 2.0 * math.pi


def subtract_intervals(lo: float, hi: float, covers: list[tuple[float, float]], min_len: float) -> list[tuple[float, float]]:
    """Parts of [lo, hi] not inside any cover interval, each at least ``min_len`` long."""
    out, start = [], lo
    for a, b in sorted(covers):
        if a > start:
            out.append((start, min(a, hi)))
        start = max(start, b)
        if start >= hi:
            break
    if start < hi:
        out.append((start, hi))
    return [(a, b) for a, b in out if b - a >= min_len]


def uncovered_segments(hidden: np.ndarray, visible: np.ndarray, eps: float, min_len: float) -> list[list[np.ndarray]]:
    """For each hidden segment (k, 2, 2): the pieces not lying within ``eps`` on a visible segment (m, 2, 2)."""
    if len(hidden) == 0:
        return []
    if len(visible) == 0:
        return [[h] for h in hidden]
    h0, d = hidden[:, 0], hidden[:, 1] - hidden[:, 0]
    length = np.hypot(d[:, 0], d[:, 1])
    u = d / np.maximum(length, 1e-300)[:, None]
    rel0 = visible[None, :, 0] - h0[:, None]  # (k, m, 2)
    rel1 = visible[None, :, 1] - h0[:, None]
    ux, uy = u[:, None, 0], u[:, None, 1]
    off0 = np.abs(ux * rel0[..., 1] - uy * rel0[..., 0])
    off1 = np.abs(ux * rel1[..., 1] - uy * rel1[..., 0])
    t0, t1 = ux * rel0[..., 0] + uy * rel0[..., 1], ux * rel1[..., 0] + uy * rel1[..., 1]
    lo, hi = np.minimum(t0, t1), np.maximum(t0, t1)
    L = length[:, None]
    touching = (off0 <= eps) & (off1 <= eps) & (hi > eps) & (lo < L - eps)
    ii, jj = np.nonzero(touching)  # row-major: each hidden segment's covers in visible order
    covers: dict[int, list] = {}
    for i, a, b in zip(ii.tolist(), (lo[ii, jj] - eps).tolist(), (hi[ii, jj] + eps).tolist()):
        covers.setdefault(i, []).append((a, b))
    out = []
    for i in range(len(hidden)):
        if i not in covers:
            out.append([hidden[i]])
            continue
        keep = subtract_intervals(0.0, float(length[i]), covers[i], min_len)
        out.append([np.array([h0[i] + u[i] * a, h0[i] + u[i] * b]) for a, b in keep])
    return out


def _shape(c: ConicSpec) -> tuple[float, float, float]:
    """The symmetric shape matrix M M^T (M = [A B]) of a conic as (xx, xy, yy): plain floats, 2 x 2."""
    return c.ax * c.ax + c.bx * c.bx, c.ax * c.ay + c.bx * c.by, c.ay * c.ay + c.by * c.by


def same_conic(a: ConicSpec, b: ConicSpec, eps: float) -> bool:
    """Same point set: same centre and same shape matrix M M^T (M = [A B]), within ``eps``."""
    if math.hypot(a.cx - b.cx, a.cy - b.cy) > eps:
        return False
    sa, sb = _shape(a), _shape(b)
    return max(abs(sa[0] - sb[0]), abs(sa[1] - sb[1]), abs(sa[2] - sb[2])) <= 2.0 * eps * max(a.major, b.major)


def cover_interval(hidden: ConicSpec, visible: ConicSpec) -> tuple[float, float]:
    """The arc of ``visible`` as an interval [a, b] (b - a <= 2 pi) of ``hidden``'s parameter.

    The rotation taking ``visible``'s parameter to ``hidden``'s is H^-1 V (H, V = [A B] of each; orthogonal
    for the same conic), written out for 2 x 2 matrices: this runs per pair of arcs, numpy calls would dominate.
    """
    h = hidden
    det_h = h.ax * h.by - h.bx * h.ay
    if det_h == 0.0:  # a conic collapsed to a point or a segment: covers nothing
        return 0.0, 0.0
    c, s = math.cos(visible.first), math.sin(visible.first)
    px, py = visible.ax * c + visible.bx * s, visible.ay * c + visible.by * s  # V (cos, sin)
    theta = math.atan2((h.ax * py - h.ay * px) / det_h, (h.by * px - h.bx * py) / det_h)  # H^-1 p
    span = abs(visible.last - visible.first)
    det_v = visible.ax * visible.by - visible.bx * visible.ay
    sense = math.copysign(1.0, det_v) * math.copysign(1.0, det_h) * math.copysign(1.0, visible.last - visible.first)
    return (theta, theta + span) if sense > 0 else (theta - span, theta)


def uncovered_arcs(hidden: ConicSpec, visible: list[ConicSpec], eps: float, min_len: float) -> list[ConicSpec]:
    """Parts of a hidden arc not on a visible arc of the same conic (angles taken modulo 2 pi).

    Plain float arithmetic (a view has a few dozen arcs: numpy calls on 2 x 2 matrices would dominate).
    """
    f, l = sorted((hidden.first, hidden.last))
    hx, hy = hidden.cx, hidden.cy
    covers = []
    for v in visible:
        if abs(v.cx - hx) > eps or abs(v.cy - hy) > eps or not same_conic(hidden, v, eps):  # other centre: skip fast
            continue
        a, b = cover_interval(hidden, v)
        a2 = f + (a - f) % TWO_PI
        b2 = a2 + (b - a)
        covers.append((a2, b2))
        if b2 - TWO_PI > f:  # wraps past f + 2 pi: the tail covers the start of [f, l]
            covers.append((f, b2 - TWO_PI))
    if not covers:
        return [hidden]
    tol_angle = eps / max(hidden.major, 1e-300)
    covers = [(a - tol_angle, b + tol_angle) for a, b in covers]
    return [hidden.with_range(a, b) for a, b in subtract_intervals(f, l, covers, min_len / max(hidden.major, 1e-300))]
