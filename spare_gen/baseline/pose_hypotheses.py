"""The geometry behind ``--arch hypotheses``: for each pose a question's choice shows (a pose offered by
isometric_to_pose, the pose of pose_to_isometric's or three_view_to_isometric's candidates), where F, R and T would lie
in that pose's drawing. Plain numpy; no torch.

Every isometric pose of SPARE3D sits on a corner of the cube (``spare_gen.canvas.poses``), so pose ``k`` of a model
M is pose ``c`` (the set's first pose) of the same model turned by a symmetry ``g`` of the cube, with the image then
turned or mirrored by ``t``: ``iso_k(M) = t(iso_c(g M))``. For the upper poses 1-4, ``g`` is a quarter turn about
+Z and ``t`` is the identity; for poses seen from below (5-8) ``g`` also turns the model over and ``t`` turns the
image by a half turn. And every view of ``g M`` is one of M's F, R, T drawings, mirrored or turned, because a view
along an axis shows the same lines from either end (only which of them are hidden changes, so the network is given
all ink of a view, hidden and visible alike). So, per choice, the views re-arranged as ``g M`` would show them are
an exact function of the question's F, R and T: one scorer, shared by all choices, asks "is this isometric drawing
pose ``c`` of a model with these views?", and the answer is the choice that scores highest.

``FaceWarp`` then places each re-arranged view where its face lies in pose ``c``'s drawing (the affine map of the
view's plane into the isometric image, pushed out to the model's bounding-box face, whose depth the other views'
widths give), so the scorer compares pixels that show the same part of the model.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from spare_gen.canvas.poses import THREE_VIEWS, pose

# (view, the axis its direction runs along: 0 = X, 1 = Y, 2 = Z): F looks along Y, R along X, T along Z
VIEW_DEPTH_AXIS = {"f": 1, "r": 0, "t": 2}


def _frame(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = pose(name)
    return np.asarray(p.direction), np.asarray(p.x_direction), np.asarray(p.up)


def _signed_permutations(n: int):
    """The n x n signed permutation matrices (the cube's 48 symmetries for n = 3, the square's 8 for n = 2), in a
    fixed order."""
    for perm in itertools.permutations(range(n)):
        for signs in itertools.product((1, -1), repeat=n):
            m = np.zeros((n, n))
            for row, (col, sign) in enumerate(zip(perm, signs)):
                m[row, col] = sign
            yield m


@dataclass(frozen=True)
class ViewSource:
    """One view of the turned model: which of M's views (index into F, R, T) it is, and the 2 x 2 map ``A`` of image
    coordinates (x right, y up, about the centre): the turned view at ``A @ (u, v)`` shows M's view at ``(u, v)``."""

    source: int
    a: tuple[tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class Hypothesis:
    """What the question's inputs look like if ``pose`` is the answer: ``t`` maps the isometric drawing of pose
    ``canonical`` of ``g M`` to the given drawing, and ``views`` are ``g M``'s F, R, T drawn from M's."""

    pose: int
    canonical: int
    g: tuple[tuple[float, ...], ...]
    t: tuple[tuple[float, float], tuple[float, float]]
    views: tuple[ViewSource, ViewSource, ViewSource]


def _as_tuple(m: np.ndarray) -> tuple:
    return tuple(tuple(float(v) for v in row) for row in m)


def _symmetry(k: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """(g, t) with iso_k(M) = t(iso_c(g M)): a proper rotation before a mirror, no image change before one."""
    nk, rk, uk = _frame(str(k))
    nc, rc, uc = _frame(str(c))
    best = None
    for g in _signed_permutations(3):
        if not np.allclose(g.T @ nc, nk):
            continue
        for t in _signed_permutations(2):
            if np.allclose(np.stack([rk, uk]), t @ np.stack([g.T @ rc, g.T @ uc])):
                rank = (bool(np.linalg.det(g) < 0), not np.allclose(t, np.eye(2)))
                if best is None or rank < best[0]:
                    best = (rank, g, t)
    if best is None:
        raise ValueError(f"pose {k} is no symmetry of pose {c}: the hypotheses need isometric poses 1-8")
    return best[1], best[2]


def _view_sources(g: np.ndarray) -> tuple[ViewSource, ViewSource, ViewSource]:
    out = []
    for view in THREE_VIEWS:
        n, r, u = _frame(view)
        d = g.T @ n
        for i, source in enumerate(THREE_VIEWS):
            n0, r0, u0 = _frame(source)
            if np.isclose(abs(d @ n0), 1.0):
                a = np.array([[(g.T @ r) @ r0, (g.T @ r) @ u0], [(g.T @ u) @ r0, (g.T @ u) @ u0]])
                out.append(ViewSource(i, _as_tuple(a)))
                break
    return tuple(out)  # type: ignore[return-value]


@lru_cache(maxsize=None)
def hypotheses(choice_poses: tuple[int, ...]) -> tuple[Hypothesis, ...]:
    """One hypothesis per choice pose, in answer order; the first pose is the canonical one."""
    if not choice_poses:
        raise ValueError("no choice poses")
    c = int(choice_poses[0])
    out = []
    for k in choice_poses:
        g, t = _symmetry(int(k), c)
        out.append(Hypothesis(int(k), c, _as_tuple(g), _as_tuple(t), _view_sources(g)))
    return tuple(out)


def gather_index(a, size: int) -> np.ndarray:
    """Flat source pixel per target pixel of a size x size image for ``target(A p) = source(p)`` (a signed
    permutation ``A`` maps the pixel grid onto itself exactly)."""
    a = np.asarray(a, dtype=float)
    c = (size - 1) / 2
    rows, cols = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    inv = np.linalg.inv(a)
    tu, tv = cols - c, c - rows
    u = inv[0, 0] * tu + inv[0, 1] * tv
    v = inv[1, 0] * tu + inv[1, 1] * tv
    return (np.rint(c - v).astype(np.int64) * size + np.rint(u + c).astype(np.int64)).reshape(-1)


@dataclass(frozen=True)
class FaceWarp:
    """Where one of F, R, T lies in pose ``canonical``'s drawing: ``m_inv`` maps isometric image coordinates (minus
    the face's offset) back to the view's, the face is pushed ``sign`` x half the model's depth along the view's
    direction, which moves it by ``offset_per_depth`` in the image; ``depth_axis`` says which extent that is."""

    m_inv: tuple[tuple[float, float], tuple[float, float]]
    sign: float
    offset_per_depth: tuple[float, float]
    depth_axis: int


@lru_cache(maxsize=None)
def face_warps(canonical: int) -> tuple[FaceWarp, FaceWarp, FaceWarp]:
    """F's, R's and T's warps into the drawing of pose ``canonical``: each onto the face of the bounding box that
    the pose sees (a view's own plane when the pose sees it edge-on)."""
    nc, rc, uc = _frame(str(canonical))
    out = []
    for view in THREE_VIEWS:
        n, r, u = _frame(view)
        m = np.array([[r @ rc, u @ rc], [r @ uc, u @ uc]])
        out.append(FaceWarp(_as_tuple(np.linalg.inv(m)), float(np.sign(n @ nc)),
                            (float(n @ rc), float(n @ uc)), VIEW_DEPTH_AXIS[view]))
    return tuple(out)  # type: ignore[return-value]
