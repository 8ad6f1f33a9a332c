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
    out = []
    for i in range(len(hidden)):
        js = np.flatnonzero(touching[i])
        if len(js) == 0:
            out.append([hidden[i]])
            continue
        keep = subtract_intervals(0.0, float(length[i]), [(lo[i, j] - eps, hi[i, j] + eps) for j in js], min_len)
        out.append([np.array([h0[i] + u[i] * a, h0[i] + u[i] * b]) for a, b in keep])
    return out


def _matrix(c: ConicSpec) -> np.ndarray:
    return np.array([[c.ax, c.bx], [c.ay, c.by]])


def same_conic(a: ConicSpec, b: ConicSpec, eps: float) -> bool:
    """Same point set: same centre and same shape matrix M M^T (M = [A B]), within ``eps``."""
    if math.hypot(a.cx - b.cx, a.cy - b.cy) > eps:
        return False
    ma, mb = _matrix(a), _matrix(b)
    return bool(np.abs(ma @ ma.T - mb @ mb.T).max() <= 2.0 * eps * max(a.major, b.major))


def cover_interval(hidden: ConicSpec, visible: ConicSpec) -> tuple[float, float]:
    """The arc of ``visible`` as an interval [a, b] (b - a <= 2 pi) of ``hidden``'s parameter."""
    rot = np.linalg.solve(_matrix(hidden), _matrix(visible))  # orthogonal for the same conic
    start = rot @ (math.cos(visible.first), math.sin(visible.first))
    theta = math.atan2(start[1], start[0])
    span = abs(visible.last - visible.first)
    sense = np.sign(np.linalg.det(rot)) * np.sign(visible.last - visible.first)
    return (theta, theta + span) if sense > 0 else (theta - span, theta)


def uncovered_arcs(hidden: ConicSpec, visible: list[ConicSpec], eps: float, min_len: float,
                   centres: np.ndarray | None = None) -> list[ConicSpec]:
    """Parts of a hidden arc not on a visible arc of the same conic (angles taken modulo 2 pi).

    ``centres``: the visible arcs' centres as an (m, 2) array, to skip arcs of other conics quickly.
    """
    f, l = sorted((hidden.first, hidden.last))
    if centres is not None and len(visible):
        near = np.flatnonzero(np.abs(centres - (hidden.cx, hidden.cy)).max(axis=1) <= eps).tolist()
        visible = [visible[i] for i in near]
    covers = []
    for v in visible:
        if not same_conic(hidden, v, eps):
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
