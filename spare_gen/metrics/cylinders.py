"""Volumetric IoU of two wireframes seen as unions of fixed-radius cylinders, by seeded point sampling.

Each edge becomes a capsule (a cylinder with hemispherical caps: the points within ``radius`` of the
segment), so the union of a wireframe's capsules is exactly its ``radius``-neighbourhood and joints have
no gaps. Points are drawn from each wireframe's capsules in proportion to capsule volume and weighted by
1 / (number of own capsules containing the point), which makes the volume estimates unbiased despite the
heavy overlap of short consecutive segments along discretised curves.

Each wireframe is sampled with a fresh generator from the same ``derive_rng(seed, "cylinder_iou")`` after
putting its segments in a canonical order, so its samples depend only on (seed, geometry): the estimate is
exactly symmetric and exactly 1 for identical inputs, however they are indexed. The shared volume is the
mean of the estimates from both sides, so when every sample of each wireframe lies inside the other's
neighbourhood (tiny perturbations) the IoU is exactly 1 rather than 1 plus Monte-Carlo noise.

Flat-ended cylinders reuse the same samples: the samples drawn in a capsule's tube part are exactly a
sample of the flat cylinders' mixture (each tube chosen in proportion to its volume, uniform inside), so
one draw and one containment query give both IoUs. The flat estimate's effective sample count is the tube
share of the samples (most of them unless the edges are much shorter than the radius).
"""

from __future__ import annotations

from enum import Enum
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.spatial import cKDTree

from spare_gen.metrics.sampling import clean_segments, sample_segments
from spare_gen.rng import derive_rng
from spare_gen.wireframe import Wireframe

CYLINDER_RADIUS = 0.02


class CylinderEnds(str, Enum):
    """The shape around each edge: a capsule (round caps, the default) or a flat-ended cylinder."""

    ROUND = "round"  # points within ``radius`` of the segment: joints are covered
    FLAT = "flat"  # points within ``radius`` whose projection falls on the segment: the paper's "cylinders"

N_SAMPLES = 10_000  # per wireframe; IoU standard error below 0.5 %
_CANDIDATE_SPACING = 1.5  # piece length of the containment search's anchors, in radii (measured fastest)


def _perpendicular_frame(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors orthogonal to each unit row of ``d`` and to each other."""
    helper = np.where(np.abs(d[:, :1]) < 0.9, np.array([[1.0, 0, 0]]), np.array([[0, 1.0, 0]]))
    u = np.cross(d, helper)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return u, np.cross(d, u)


def _ball_volume(radius: float, ends: CylinderEnds) -> float:
    return 4.0 / 3.0 * np.pi * radius**3 if ends is CylinderEnds.ROUND else 0.0


class _Draws:
    """The random numbers of a capsule sample (:func:`_placed`), drawn in one order; none depends on the segments, so one
    set serves every wireframe sampled with the same generator seed, count and radius."""

    def __init__(self, radius: float, n: int, rng: np.random.Generator):
        # what Generator.choice(size=n, p=...) draws: one uniform per sample, searched in the normalised CDF
        self.choice = rng.random(n)
        u = rng.random((n, 4))
        self.part, self.along = u[:, 0], u[:, 3]
        r_disc = radius * np.sqrt(u[:, 1])
        angle = 2.0 * np.pi * u[:, 2]
        self.disc_cos, self.disc_sin = (r_disc * np.cos(angle))[:, None], (r_disc * np.sin(angle))[:, None]
        g = rng.standard_normal((n, 3))
        r_ball = radius * np.cbrt(rng.random(n))
        g *= (r_ball / np.maximum(np.linalg.norm(g, axis=1), 1e-300))[:, None]
        self.ball = g
        self.offset = r_disc, r_ball  # how far from the axis (tube) or from the end (cap) each sample lies


@lru_cache(maxsize=4)
def _seeded_draws(seed: int, radius: float, n: int) -> _Draws:
    return _Draws(radius, n, derive_rng(seed, "cylinder_iou"))


class _Placed(NamedTuple):
    """Sample points and where each was drawn (see :func:`_placed`)."""

    points: np.ndarray
    in_tube: np.ndarray
    segment: np.ndarray  # the capsule it was drawn in
    tau: np.ndarray  # its axis position: within ``radius`` of a + tau (b - a) (0 or 1 for a cap)
    sure: np.ndarray  # certainly inside that capsule, and inside its flat cylinder exactly when in the tube


_SURE_MARGIN = 1e-9  # x (radius + largest coordinate): far beyond the rounding of a point or of the exact test


def _placed(segments: np.ndarray, radius: float, draws: _Draws) -> _Placed:
    """``draws`` placed in the mixture of ``segments``' capsules (each capsule chosen in proportion to its volume),
    with where each point was drawn.

    ``sure`` marks the points whose own-capsule test (:func:`_exact_inside`'s exact expressions) cannot come out
    otherwise than by construction: a tube point more than a margin inside the tube and away from both ends
    (inside, and its projection on the segment: flat too), a cap point more than the margin inside its half ball
    and off the end's plane (inside, projection beyond the end: not flat). The margin dwarfs the rounding of
    placing a point and of the test, so only points drawn within it of a boundary are tested.
    """
    a, b = segments[:, 0], segments[:, 1]
    length = np.linalg.norm(b - a, axis=1)
    d = (b - a) / length[:, None]
    tube = np.pi * radius**2 * length
    ball = _ball_volume(radius, CylinderEnds.ROUND)
    volume = tube + ball
    p = volume / volume.sum()
    cdf = p.cumsum()
    cdf /= cdf[-1]
    k = cdf.searchsorted(draws.choice, side="right")
    in_tube = draws.part * volume[k] < tube[k]
    e1, e2 = _perpendicular_frame(d)
    points = np.empty((len(k), 3))
    # tube part: uniform along the axis, uniform over the disc
    t, kt = np.nonzero(in_tube)[0], k[in_tube]
    tube_pts = a[kt] + (draws.along[t] * length[kt])[:, None] * d[kt]
    tube_pts += draws.disc_cos[t] * e1[kt] + draws.disc_sin[t] * e2[kt]
    points[t] = tube_pts
    # caps: a uniform ball point, its back half put on end a and its front half on end b
    c, kc = np.nonzero(~in_tube)[0], k[~in_tube]
    g = draws.ball[c]
    towards = np.einsum("ij,ij->i", g, d[kc])
    front = towards >= 0
    points[c] = np.where(front[:, None], b[kc], a[kc]) + g
    tau = np.empty(len(k))
    tau[t], tau[c] = draws.along[t], front
    margin = _SURE_MARGIN * (radius + float(np.abs(segments).max()))
    sure = np.empty(len(k), dtype=bool)
    axial = draws.along[t] * length[kt]
    sure[t] = (draws.offset[0][t] < radius - margin) & (axial > margin) & (length[kt] - axial > margin)
    sure[c] = (draws.offset[1][c] < radius - margin) & (np.abs(towards) > margin)
    return _Placed(points, in_tube, k, tau, sure)


def canonical_order(segments: np.ndarray) -> np.ndarray:
    """Segments with lexicographically smaller end first, rows sorted: the same geometry gives the same array."""
    diff = segments[:, 1] - segments[:, 0]
    first = np.argmax(diff != 0, axis=1)
    flip = diff[np.arange(len(diff)), first] < 0
    segs = np.where(flip[:, None, None], segments[:, ::-1], segments)
    flat = segs.reshape(len(segs), 6)
    return segs[np.lexsort(flat.T[::-1])]


class _Anchors:
    """Candidate anchors of a segment set for the containment searches: the midpoints of pieces at most ``spacing``
    long and both end points of every segment, with the segment and piece of each, and ``reach(radius)``: how far
    from each anchor a point it is looked for at can be."""

    def __init__(self, segments: np.ndarray, spacing: float):
        samples = sample_segments(segments, spacing)
        n = len(segments)
        self.piece_length = samples.weights
        self.points = np.concatenate([samples.points, segments[:, 0], segments[:, 1]])
        self.segment_index = np.concatenate([samples.segment_index, np.arange(n), np.arange(n)])
        self.piece_index = np.concatenate([samples.piece_index, np.zeros(2 * n, dtype=np.int64)])
        self.piece_count = samples.piece_count
        self.tree = cKDTree(self.points)
        self.piece_start = np.cumsum(self.piece_count) - self.piece_count  # anchor index of each segment's piece 0
        self._reach: dict[float, np.ndarray] = {}

    def reach(self, radius: float) -> np.ndarray:
        """Per anchor, with a rounding margin: ``radius`` for an end point, ``sqrt(radius**2 + (piece / 2)**2)``
        for a piece midpoint (the point's projection lies on that piece, at most half its length away)."""
        if radius not in self._reach:
            ends = np.full(len(self.points) - len(self.piece_length), radius)
            exact = np.concatenate([np.sqrt(radius**2 + (0.5 * self.piece_length) ** 2), ends])
            self._reach[radius] = exact * (1.0 + 1e-9) + 1e-12
        return self._reach[radius]


def _on_segments(points: np.ndarray, segments: np.ndarray):
    """Each point against its own segment (row by row): ``ap``, ``ab``, the projection's numerator and
    denominator, and ``t`` clipped to the segment (clean segments have positive length)."""
    a = segments[:, 0]
    ab = segments[:, 1] - a
    ap = points - a
    num = np.einsum("...k,...k->...", ap, ab)
    denom = np.einsum("...k,...k->...", ab, ab)
    return ap, ab, num, denom, np.clip(num / denom, 0.0, 1.0)


def _exact_inside(points: np.ndarray, segments: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Row by row: the point inside the segment's capsule, and inside its flat cylinder. The one exact test every
    containment search ends with, so they all give the same answers."""
    ap, ab, num, denom, t = _on_segments(points, segments)
    inside = np.linalg.norm(ap - t[:, None] * ab, axis=-1) <= radius
    return inside, inside & (num >= 0) & (num <= denom)


_SLACK = 1e-9  # x (radius + largest coordinate): widens candidate bounds against rounding; the exact test decides


class _Pieces:
    """Sample points grouped by the anchor piece (:class:`_Anchors`) holding where each was drawn.

    A point drawn at ``tau`` on segment ``k`` lies within ``radius`` of ``k(tau)``, which is within half a piece of
    that piece's midpoint: so the point can be inside a capsule only if its segment passes within ``2 radius +
    piece / 2`` of the midpoint (:func:`_close_pieces`). That bounds the candidate segments of every point of a
    piece at once, without a KD-tree of the points.
    """

    def __init__(self, placed: _Placed, anchors: _Anchors):
        count = anchors.piece_count[placed.segment]
        piece = anchors.piece_start[placed.segment] + np.minimum((placed.tau * count).astype(np.int64), count - 1)
        self.order = np.argsort(piece, kind="stable")
        self.bounds = np.searchsorted(piece[self.order], np.arange(len(anchors.piece_length) + 1))

    def pairs(self, piece: np.ndarray, segment: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(point, segment) pairs: every point of ``piece[i]`` with ``segment[i]``."""
        lo, hi = self.bounds[piece], self.bounds[piece + 1]
        return self.order[_ranges(lo, hi)], np.repeat(segment, hi - lo)


def _close_pieces(anchors: _Anchors, segments: np.ndarray, segment_anchors: _Anchors | None, radius: float):
    """(piece of ``anchors``, segment of ``segments``, distance from the piece's midpoint to the segment) for every
    segment passing within ``2 radius + piece / 2`` of a piece's midpoint (see :class:`_Pieces`), each pair once.

    ``segment_anchors`` are the anchors of ``segments``; None: ``segments`` are the anchors' own, and a piece's own
    segment is left out. Such a segment has a piece midpoint within ``3.5 radius`` of the piece's (pieces are at
    most ``1.5 radius`` long), which is where the pairs are looked for.
    """
    slack = _SLACK * (radius + max(float(np.abs(anchors.points).max()), float(np.abs(segments).max())))
    reach = 3.5 * radius + slack
    n_pieces = len(anchors.piece_length)
    if segment_anchors is None:
        near = anchors.tree.query_pairs(reach, output_type="ndarray")
        near = near[(near < n_pieces).all(axis=1)]  # piece midpoints on both sides
        piece, other = np.concatenate([near[:, 0], near[:, 1]]), np.concatenate([near[:, 1], near[:, 0]])
        segment = anchors.segment_index[other]
        keep = segment != anchors.segment_index[piece]
        piece, segment = piece[keep], segment[keep]
    else:
        near = anchors.tree.sparse_distance_matrix(segment_anchors.tree, reach, output_type="ndarray")
        keep = (near["i"] < n_pieces) & (near["j"] < len(segment_anchors.piece_length))
        piece, segment = near["i"][keep], segment_anchors.segment_index[near["j"][keep]]
    keys = np.unique(piece * len(segments) + segment)
    piece, segment = keys // len(segments), keys % len(segments)
    ap, ab, _, _, t = _on_segments(anchors.points[piece], segments[segment])
    dist = np.linalg.norm(ap - t[:, None] * ab, axis=-1)
    close = dist <= 2.0 * radius + 0.5 * anchors.piece_length[piece] + slack
    return piece[close], segment[close], dist[close]


def _own_containment(placed: _Placed, pieces: _Pieces, segments, radius, anchors: _Anchors):
    """The (point, segment) containment pairs for points drawn by :func:`_placed` from these ``segments``, found from where
    each was drawn (:class:`_Pieces`): every point with its own segment, which ``placed.sure`` settles for all but
    the points drawn next to a boundary, and the points of each piece with the other segments that pass close."""
    piece, segment, _ = _close_pieces(anchors, segments, None, radius)
    near_p, near_s = pieces.pairs(piece, segment)
    unsure = np.nonzero(~placed.sure)[0]
    p_idx = np.concatenate([unsure, near_p])
    s_idx = np.concatenate([placed.segment[unsure], near_s])
    inside, flat = _exact_inside(placed.points[p_idx], segments[s_idx], radius)
    sure = np.nonzero(placed.sure)[0]
    return (np.concatenate([sure, p_idx[inside]]), np.concatenate([placed.segment[sure], s_idx[inside]]),
            np.concatenate([placed.in_tube[sure], flat[inside]]))


def _any_inside(points: np.ndarray, pieces: _Pieces, anchors: _Anchors, segments: np.ndarray,
                segment_anchors: _Anchors, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Per point (drawn from the pieces of ``anchors``): inside any of ``segments``' capsules, inside any of their
    flat cylinders.

    Only one containing segment is needed, so every point of a piece is first tested against the segment nearest
    the piece's midpoint (a witness); only the points it does not put inside a flat cylinder are tested against the
    piece's other close segments. Candidates come from :func:`_close_pieces` and the test is exact, so the answers
    are those of testing every segment.
    """
    in_round, in_flat = np.zeros(len(points), dtype=bool), np.zeros(len(points), dtype=bool)
    piece, segment, dist = _close_pieces(anchors, segments, segment_anchors, radius)
    if len(piece) == 0:
        return in_round, in_flat
    order = np.lexsort((dist, piece))  # per piece, the nearest segment first
    piece, segment = piece[order], segment[order]
    witness = np.r_[True, piece[1:] != piece[:-1]]
    for nearest in (True, False):
        which = witness if nearest else ~witness
        p, s = pieces.pairs(piece[which], segment[which])
        if not nearest:  # only the points not yet inside a flat cylinder
            open_ = ~in_flat[p]
            p, s = p[open_], s[open_]
        inside, flat = _exact_inside(points[p], segments[s], radius)
        in_round[p[inside]] = True
        in_flat[p[flat]] = True
    return in_round, in_flat


class _Side:
    """One wireframe's capsule samples and what every comparison needs of them (see :func:`_side`)."""

    def __init__(self, segments: np.ndarray, radius: float, n_samples: int, seed: int):
        self.segments = segments
        self.radius = radius
        self.n_samples = n_samples
        placed = _placed(segments, radius, _seeded_draws(seed, radius, n_samples))
        in_tube = placed.in_tube
        self.points, self.in_tube = placed.points, in_tube
        self.anchors = _Anchors(segments, _CANDIDATE_SPACING * radius)
        self.pieces = _Pieces(placed, self.anchors)
        p_idx, s_idx, flat = _own_containment(placed, self.pieces, segments, radius, self.anchors)
        own_round = np.maximum(np.bincount(p_idx, minlength=n_samples), 1)  # >= 1 by construction
        own_flat = np.bincount(p_idx[flat], minlength=n_samples)  # >= 1 for tube samples
        self.inv_round = 1.0 / own_round
        self.inv_flat = np.where(in_tube, 1.0 / np.maximum(own_flat, 1), 0.0)
        length = np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1)
        self.total_tube = float(np.pi * radius**2 * length.sum())
        self.total_round = self.total_tube + len(segments) * _ball_volume(radius, CylinderEnds.ROUND)
        self.n_tube = int(in_tube.sum())
        # own containment pairs sorted by segment, to answer "inside these of my segments" for shared segments
        order = np.argsort(s_idx, kind="stable")
        self.pair_point, self.pair_flat = p_idx[order], flat[order]
        self.pair_bounds = np.searchsorted(s_idx[order], np.arange(len(segments) + 1))
        rows = np.ascontiguousarray(segments).reshape(len(segments), 6)
        self.row_keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * 6))).ravel()

    def inside(self, other: "_Side") -> tuple[np.ndarray, np.ndarray]:
        """Per own sample: inside ``other``'s capsules, inside its flat cylinders.

        Segments both wireframes have (the same six coordinates) reuse the own containment pairs; only the
        other's remaining segments are queried.
        """
        n = self.n_samples
        shared_own = np.isin(self.row_keys, other.row_keys)
        new_other = ~np.isin(other.row_keys, self.row_keys)
        in_round = np.zeros(n, dtype=bool)
        in_flat = np.zeros(n, dtype=bool)
        if shared_own.any():
            seg = np.nonzero(shared_own)[0]
            starts, stops = self.pair_bounds[seg], self.pair_bounds[seg + 1]
            take = _ranges(starts, stops)
            in_round[self.pair_point[take]] = True
            in_flat[self.pair_point[take[self.pair_flat[take]]]] = True
        if new_other.any():
            if new_other.all():
                segments, anchors = other.segments, other.anchors
            else:
                segments = other.segments[new_other]
                anchors = _Anchors(segments, _CANDIDATE_SPACING * self.radius)
            r, f = _any_inside(self.points, self.pieces, self.anchors, segments, anchors, self.radius)
            in_round |= r
            in_flat |= f
        return in_round, in_flat

    def volume_terms(self, other: "_Side") -> dict[CylinderEnds, tuple[float, float]]:
        """Per end shape: (own volume, volume shared with ``other``) from the own samples."""
        in_other, in_other_flat = self.inside(other)
        flat_terms = (
            (
                self.total_tube * float(self.inv_flat.sum()) / self.n_tube,
                self.total_tube * float((self.inv_flat * in_other_flat).sum()) / self.n_tube,
            )
            if self.n_tube
            else (self.total_tube, 0.0)
        )
        return {
            CylinderEnds.ROUND: (
                self.total_round * float(self.inv_round.mean()),
                self.total_round * float((self.inv_round * in_other).mean()),
            ),
            CylinderEnds.FLAT: flat_terms,
        }


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(starts[k], stops[k])`` over k, without a Python loop."""
    lengths = stops - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(total, dtype=np.int64) + offsets


@lru_cache(maxsize=32)
def _side_cached(key: bytes, n_segments: int, radius: float, n_samples: int, seed: int) -> _Side:
    return _Side(np.frombuffer(key, dtype=np.float64).reshape(n_segments, 2, 3), radius, n_samples, seed)


def _side(segments: np.ndarray, radius: float, n_samples: int, seed: int) -> _Side:
    """One wireframe's samples, their weights, anchors and own containment pairs, cached on the segments'
    bytes: a report compares many predictions with the same GT (and the symmetry and triangle tests compare
    the same predictions both ways)."""
    segments = np.ascontiguousarray(segments, dtype=np.float64)
    return _side_cached(segments.tobytes(), len(segments), float(radius), int(n_samples), int(seed))


def cylinder_ious(
    pred: Wireframe, gt: Wireframe, radius: float = CYLINDER_RADIUS, n_samples: int = N_SAMPLES, seed: int = 0
) -> dict[str, float]:
    """Both IoUs from one set of samples: ``iou``/``jaccard_distance`` (capsules) and ``iou_flat``/
    ``jaccard_distance_flat`` (flat-ended cylinders). See :func:`cylinder_iou`."""
    if radius <= 0 or n_samples <= 0:
        raise ValueError(f"cylinder_iou needs a positive radius and sample count, got {radius!r}, {n_samples!r}")
    ps, gs = canonical_order(clean_segments(pred)), canonical_order(clean_segments(gt))
    out = {}
    if len(ps) == 0 or len(gs) == 0:
        iou = 1.0 if len(ps) == len(gs) == 0 else 0.0
        ious = {CylinderEnds.ROUND: iou, CylinderEnds.FLAT: iou}
    else:
        a, b = _side(ps, radius, n_samples, seed), _side(gs, radius, n_samples, seed)
        side_p, side_g = a.volume_terms(b), b.volume_terms(a)
        ious = {}
        for ends in CylinderEnds:
            (vol_p, inter_p), (vol_g, inter_g) = side_p[ends], side_g[ends]
            inter = 0.5 * (inter_p + inter_g)
            union = vol_p + vol_g - inter
            ious[ends] = float(np.clip(inter / union, 0.0, 1.0)) if union > 0 else 1.0
    for ends, suffix in ((CylinderEnds.ROUND, ""), (CylinderEnds.FLAT, "_flat")):
        out[f"iou{suffix}"] = ious[ends]
        out[f"jaccard_distance{suffix}"] = 1.0 - ious[ends]
    return out


def cylinder_iou(
    pred: Wireframe,
    gt: Wireframe,
    radius: float = CYLINDER_RADIUS,
    n_samples: int = N_SAMPLES,
    seed: int = 0,
    ends: str = "round",
) -> dict[str, float]:
    """IoU of the two unions of edge cylinders and the Jaccard distance 1 - IoU (symmetric).

    ``ends="round"`` (default): capsules, i.e. the ``radius``-neighbourhoods; ``ends="flat"``: cylinders
    with flat ends, the paper's wording ("a set of cylinders with a fixed radius"), which leave wedge-shaped
    gaps at bends. Two empty wireframes: IoU 1; exactly one empty: IoU 0.
    """
    try:
        ends = CylinderEnds(ends)
    except ValueError:
        raise ValueError(f"unknown cylinder ends {ends!r}; choose from round, flat") from None
    both = cylinder_ious(pred, gt, radius, n_samples, seed)
    suffix = "" if ends is CylinderEnds.ROUND else "_flat"
    return {"iou": both[f"iou{suffix}"], "jaccard_distance": both[f"jaccard_distance{suffix}"]}
