"""Metrics comparing a predicted wireframe with a ground-truth one (Langerman et al., ICCV 2025, Sec. 3).

Conventions shared by every metric here:

* Units are normalised: wireframes are expected scaled to bounding-box diagonal 1, so the default
  tolerances (:data:`CORNER_THRESHOLD`, :data:`EDGE_THRESHOLD`, :data:`CYLINDER_RADIUS`: 2 % of the
  diagonal; :data:`SAMPLE_SPACING`: 0.5 %) are fixed numbers, not fractions of each model's size.
* Edges are undirected sets: (i, j) == (j, i), duplicate edges count once, and self-loops or zero-length
  edges (no geometry) are ignored (see :func:`spare_gen.metrics.sampling.clean_edges`).
* Empty inputs never raise and never give NaN:
  precision/recall/F1 are 1 when both sides are empty and 0 when exactly one side is (an empty answer
  earns nothing; a non-empty answer against an empty truth is all false positives);
  point-set distances (chamfer, Hausdorff) are 0 when both are empty and :data:`EMPTY_DISTANCE` (one
  bounding-box diagonal) when one is; IoU is 1 for two empty wireframes and 0 when one is empty;
  WED and the spectral distance handle empties through their own definitions (see their docstrings).
* Symmetric metrics (F1s, chamfer, Hausdorff, IoU, spectral) give identical values for swapped arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import lru_cache, partial
from typing import Callable

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist

from spare_gen.config.schema import CORNER_THRESHOLD, EDGE_THRESHOLD
from spare_gen.metrics.cylinders import CYLINDER_RADIUS, canonical_order, cylinder_iou, cylinder_ious
from spare_gen.metrics.matching import match_candidates, match_points, prf
from spare_gen.metrics.sampling import (
    clean_segments,
    sample_segments,
    segment_boxes,
    segment_hausdorff,
)
from spare_gen.metrics.spectral import spectral_distance, spectral_distance_l1, spectral_distances
from spare_gen.metrics.wed import wed, wed_s23dr
from spare_gen.wireframe import Wireframe, corner_mask

__all__ = [
    "CORNER_THRESHOLD", "EDGE_THRESHOLD", "SAMPLE_SPACING", "EMPTY_DISTANCE", "CYLINDER_RADIUS",
    "VertexSelection", "Direction", "Metric", "METRICS", "METRIC_FAMILIES",
    "corner_prf", "edge_prf", "wed", "wed_s23dr", "edge_chamfer", "edge_hausdorff", "edge_distances", "edge_emd",
    "edge_distances_random", "random_edge_samples",
    "cylinder_iou",
    "spectral_distance", "spectral_distance_l1", "EMD_POINTS",
    "get_metric_names", "evaluate_all",
]

SAMPLE_SPACING = 0.005  # arc-length spacing of edge samples for chamfer / Hausdorff
EMPTY_DISTANCE = 1.0  # chamfer / Hausdorff between an empty and a non-empty wireframe: one bbox diagonal
EMD_POINTS = 256  # equal-mass samples per wireframe for the bijective (EMD) chamfer


class VertexSelection(str, Enum):
    """Which vertices :func:`corner_prf` compares."""

    CORNERS = "corners"  # only CORNER-kind vertices (B-rep vertices); CURVE points are discretisation
    ALL = "all"  # every vertex, CURVE points included


def _selection(kinds: str | VertexSelection) -> VertexSelection:
    try:
        return VertexSelection(kinds)
    except ValueError:
        raise ValueError(f"unknown vertex kinds {kinds!r}; choose from corners, all") from None


def _selected_vertices(wf: Wireframe, kinds: VertexSelection) -> np.ndarray:
    if kinds is VertexSelection.ALL:
        return wf.vertices
    return wf.vertices[corner_mask(wf.kinds)]


def corner_prf(
    pred: Wireframe, gt: Wireframe, threshold: float = CORNER_THRESHOLD, kinds: str = "all"
) -> dict[str, float]:
    """Corner precision, recall, F1 and offset: one-to-one matching of vertices closer than ``threshold``.

    ``kinds="all"`` (default) compares every vertex, as the paper and the public evaluators (hoho2025,
    Building3D) do: a deformed curve moves its CURVE points, and only counting them lets corner metrics see
    it. ``kinds="corners"`` compares only CORNER-kind vertices (B-rep vertices), ignoring where curved
    edges happen to be cut into segments (the registry's ``corner_*_corners`` metrics). Among matchings the
    largest is used (no match is lost to a greedy or unthresholded assignment), and among those the one of
    least total distance.

    ``offset`` (the paper's Table 2 "offset" column; lower is better) is the mean corner displacement with
    every unmatched vertex charged ``threshold``: (sum of matched distances + threshold x unmatched vertices
    on the larger side) / vertices on the larger side, i.e. the OSPA distance (order 1, cut-off
    ``threshold``) of the two vertex sets. It grows as a vertex moves away, continuously through the
    threshold and then stays at it, and as vertices go missing or appear; it is symmetric, in
    [0, threshold], 0 only for identical vertex sets. ``offset_matched`` is Building3D's average corner
    offset (ACO): the mean distance of the matched pairs only, blind to a vertex moved past the threshold.
    With no matched pair both are ``threshold`` when either side has vertices, and both are 0 when both are
    empty.
    """
    sel = _selection(kinds)
    p, g = _selected_vertices(pred, sel), _selected_vertices(gt, sel)
    rows, cols = match_points(p, g, threshold)
    larger = max(len(p), len(g))
    matched = np.linalg.norm(p[rows] - g[cols], axis=1)
    if len(rows):
        offset_matched = float(matched.mean())
    else:
        offset_matched = 0.0 if larger == 0 else float(threshold)
    offset = float((matched.sum() + threshold * (larger - len(rows))) / larger) if larger else 0.0
    return {**prf(len(rows), len(p), len(g)), "offset": offset, "offset_matched": offset_matched}


def edge_prf(pred: Wireframe, gt: Wireframe, threshold: float = EDGE_THRESHOLD) -> dict[str, float]:
    """Edge precision, recall and F1: one-to-one Hungarian matching of edges whose exact segment-to-segment
    Hausdorff distance is at most ``threshold``.

    A split edge therefore matches at most one of its pieces (and only if the piece is nearly the whole
    edge), as in the paper. Candidates come from a 6-D box KD-tree (no all-pairs matrix), so thousands of
    edges are fine.
    """
    ps, gs = clean_segments(pred), clean_segments(gt)
    if len(ps) == 0 or len(gs) == 0:
        return prf(0, len(ps), len(gs))
    pairs = cKDTree(segment_boxes(ps)).sparse_distance_matrix(
        cKDTree(segment_boxes(gs)), threshold, p=np.inf, output_type="ndarray"
    )
    i, j = pairs["i"], pairs["j"]
    h = segment_hausdorff(ps[i], gs[j])
    ok = h <= threshold
    rows, _ = match_candidates(i[ok], j[ok], h[ok], len(ps), len(gs))
    return prf(len(rows), len(ps), len(gs))


def _sampled(wf: Wireframe, spacing: float):
    """(edge samples, KD-tree of their points or None), cached on the cleaned segments' bytes: a report
    compares many predictions with the same GT."""
    segments = np.ascontiguousarray(clean_segments(wf), dtype=np.float64)
    return _sampled_cached(segments.tobytes(), len(segments), float(spacing))


@lru_cache(maxsize=32)
def _sampled_cached(segments: bytes, n_segments: int, spacing: float):
    samples = sample_segments(np.frombuffer(segments).reshape(n_segments, 2, 3), spacing)
    return samples, (cKDTree(samples.points) if len(samples.points) else None)


def _directed_distances(pred: Wireframe, gt: Wireframe, spacing: float):
    """Nearest-sample distances both ways, with the arc-length weights of the querying samples."""
    (a, tree_a), (b, tree_b) = _sampled(pred, spacing), _sampled(gt, spacing)
    if len(a.points) == 0 or len(b.points) == 0:
        return None, a, b
    d_ab = tree_b.query(a.points)[0]
    d_ba = tree_a.query(b.points)[0]
    return (d_ab, d_ba), a, b


def edge_chamfer(pred: Wireframe, gt: Wireframe, spacing: float = SAMPLE_SPACING) -> float:
    """Symmetric chamfer distance between points sampled along the edges (unsquared, normalised units).

    The mean of the two directed means of nearest-neighbour distances, each weighted by the arc length a
    sample stands for, so it approximates the length-averaged distance and does not depend on how edges
    are split. Sampling is deterministic (:func:`spare_gen.metrics.sampling.sample_segments`).
    """
    dists, a, b = _directed_distances(pred, gt, spacing)
    if dists is None:
        return 0.0 if len(a.points) == len(b.points) == 0 else EMPTY_DISTANCE
    d_ab, d_ba = dists
    mean_ab = float(np.dot(a.weights, d_ab) / a.weights.sum())
    mean_ba = float(np.dot(b.weights, d_ba) / b.weights.sum())
    return 0.5 * (mean_ab + mean_ba)


def edge_hausdorff(pred: Wireframe, gt: Wireframe, spacing: float = SAMPLE_SPACING) -> float:
    """Symmetric Hausdorff distance between points sampled along the edges (within ``spacing`` of exact)."""
    dists, a, b = _directed_distances(pred, gt, spacing)
    if dists is None:
        return 0.0 if len(a.points) == len(b.points) == 0 else EMPTY_DISTANCE
    return float(max(dists[0].max(), dists[1].max()))


def edge_distances(pred: Wireframe, gt: Wireframe, spacing: float = SAMPLE_SPACING) -> dict[str, float]:
    """:func:`edge_chamfer` and :func:`edge_hausdorff` from one set of samples and nearest-neighbour queries."""
    dists, a, b = _directed_distances(pred, gt, spacing)
    if dists is None:
        value = 0.0 if len(a.points) == len(b.points) == 0 else EMPTY_DISTANCE
        return {"chamfer": value, "hausdorff": value}
    d_ab, d_ba = dists
    chamfer = 0.5 * (float(np.dot(a.weights, d_ab) / a.weights.sum()) + float(np.dot(b.weights, d_ba) / b.weights.sum()))
    return {"chamfer": chamfer, "hausdorff": float(max(d_ab.max(), d_ba.max()))}


def random_edge_samples(wf: Wireframe, rng: np.random.Generator, spacing: float = SAMPLE_SPACING) -> np.ndarray:
    """As many points per edge as :func:`spare_gen.metrics.sampling.sample_segments` takes, at uniformly random
    places along it: the sampling the paper's chamfer and Hausdorff describe ("sample points along the
    edges"), under which two samplings of one wireframe differ."""
    segments = clean_segments(wf)
    if len(segments) == 0:
        return np.zeros((0, 3))
    lengths = np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1)
    counts = np.maximum(1, np.ceil(lengths / spacing).astype(np.int64))
    seg_idx = np.repeat(np.arange(len(segments)), counts)
    t = rng.random(len(seg_idx))
    return segments[seg_idx, 0] + t[:, None] * (segments[seg_idx, 1] - segments[seg_idx, 0])


def edge_distances_random(
    pred: Wireframe,
    gt: Wireframe,
    rng: np.random.Generator,
    spacing: float = SAMPLE_SPACING,
    gt_rng: np.random.Generator | None = None,
) -> dict[str, float]:
    """:func:`edge_distances` from random samples (:func:`random_edge_samples`): chamfer is the mean of the two
    directed mean nearest-sample distances, Hausdorff the largest nearest-sample distance. Not 0 for two
    samplings of the same wireframe, unlike the deterministic default. ``gt_rng`` samples the GT (default:
    ``rng``, after the prediction)."""
    a = random_edge_samples(pred, rng, spacing)
    b = random_edge_samples(gt, rng if gt_rng is None else gt_rng, spacing)
    if len(a) == 0 or len(b) == 0:
        value = 0.0 if len(a) == len(b) == 0 else EMPTY_DISTANCE
        return {"chamfer": value, "hausdorff": value}
    d_ab, d_ba = cKDTree(b).query(a)[0], cKDTree(a).query(b)[0]
    return {"chamfer": 0.5 * (float(d_ab.mean()) + float(d_ba.mean())), "hausdorff": float(max(d_ab.max(), d_ba.max()))}


def equal_mass_samples(wf: Wireframe, n_points: int) -> np.ndarray:
    """``n_points`` points evenly spaced by arc length over all edges (each stands for 1/n of the length).

    Edges are taken in a canonical order, so the samples depend only on the geometry, not on indexing.
    """
    segments = canonical_order(clean_segments(wf))
    if len(segments) == 0:
        return np.zeros((0, 3))
    lengths = np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1)
    ends = np.cumsum(lengths)
    s = (np.arange(n_points) + 0.5) / n_points * ends[-1]
    k = np.minimum(np.searchsorted(ends, s, side="right"), len(segments) - 1)
    t = (s - (ends[k] - lengths[k])) / lengths[k]
    return segments[k, 0] + t[:, None] * (segments[k, 1] - segments[k, 0])


def edge_emd(pred: Wireframe, gt: Wireframe, n_points: int = EMD_POINTS) -> float:
    """Bijective chamfer (Earth Mover's Distance, paper Eq. 1 with a bijective assignment) between the edges.

    Each wireframe is represented by ``n_points`` equal-mass points along its edges
    (:func:`equal_mass_samples`); the mean distance of the optimal one-to-one (Hungarian) assignment is
    the W1 distance between the two length-uniform measures, up to sampling. Symmetric; unlike the chamfer
    distance it charges missing or surplus edges, because the mass must go somewhere. Empty: 0 for two
    empty wireframes, :data:`EMPTY_DISTANCE` for one.
    """
    if n_points < 1:
        raise ValueError(f"edge_emd needs at least one point, got n_points={n_points!r}")
    a, b = equal_mass_samples(pred, n_points), equal_mass_samples(gt, n_points)
    if len(a) == 0 or len(b) == 0:
        return 0.0 if len(a) == len(b) == 0 else EMPTY_DISTANCE
    cost = cdist(a, b)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].mean())


# ---------------------------------------------------------------------------------------------- registry


class Direction(str, Enum):
    """Whether a larger score means a better prediction."""

    HIGHER_IS_BETTER = "higher"
    LOWER_IS_BETTER = "lower"


Family = Callable[[Wireframe, Wireframe], "dict[str, float] | float"]

#: Metric computations run once per (pred, gt) even when they feed several registry entries.
METRIC_FAMILIES: dict[str, Family] = {
    "corner": corner_prf,
    "corner_corners": partial(corner_prf, kinds=VertexSelection.CORNERS.value),
    "edge": edge_prf,
    "wed": wed,
    "wed_prereg": partial(wed, preregister=True),
    "wed_mnn": partial(wed, assignment="mnn"),
    "wed_nearest": partial(wed, assignment="nearest"),
    "wed_ap": partial(wed, assignment="threshold"),
    "wed_s23dr": wed_s23dr,
    "edge_distance": edge_distances,  # chamfer and Hausdorff share their samples and queries
    "edge_emd": edge_emd,
    "cylinder": cylinder_ious,  # round and flat ends from one set of samples
    "spectral": spectral_distances,  # W2 and W1 share the two spectra
}


@dataclass(frozen=True)
class Metric:
    """A named scalar score: entry ``key`` of family ``family``'s result (the whole result if ``key`` is None)."""

    name: str
    family: str
    key: str | None
    direction: Direction
    symmetric: bool

    def extract(self, family_result: "dict[str, float] | float") -> float:
        return float(family_result if self.key is None else family_result[self.key])

    def __call__(self, pred: Wireframe, gt: Wireframe) -> float:
        return self.extract(METRIC_FAMILIES[self.family](pred, gt))

    def to_dissimilarity(self, score: float) -> float:
        """0 for a perfect prediction, growing as it gets worse (higher-is-better scores lie in [0, 1])."""
        return 1.0 - score if self.direction is Direction.HIGHER_IS_BETTER else score


def _metric(name, family, key, direction, symmetric) -> tuple[str, Metric]:
    return name, Metric(name, family, key, direction, symmetric)


_UP, _DOWN = Direction.HIGHER_IS_BETTER, Direction.LOWER_IS_BETTER

#: Every metric, in report order.
METRICS: dict[str, Metric] = dict(
    [
        _metric("corner_precision", "corner", "precision", _UP, False),
        _metric("corner_recall", "corner", "recall", _UP, False),
        _metric("corner_f1", "corner", "f1", _UP, True),
        _metric("edge_precision", "edge", "precision", _UP, False),
        _metric("edge_recall", "edge", "recall", _UP, False),
        _metric("edge_f1", "edge", "f1", _UP, True),
        _metric("corner_offset", "corner", "offset", _DOWN, True),
        _metric("corner_offset_matched", "corner", "offset_matched", _DOWN, True),
        _metric("corner_precision_corners", "corner_corners", "precision", _UP, False),
        _metric("corner_recall_corners", "corner_corners", "recall", _UP, False),
        _metric("corner_f1_corners", "corner_corners", "f1", _UP, True),
        _metric("wed", "wed", None, _DOWN, False),
        _metric("wed_prereg", "wed_prereg", None, _DOWN, False),
        _metric("wed_mnn", "wed_mnn", None, _DOWN, False),
        _metric("wed_nearest", "wed_nearest", None, _DOWN, False),
        _metric("wed_ap", "wed_ap", None, _DOWN, False),
        _metric("wed_s23dr", "wed_s23dr", None, _DOWN, False),
        _metric("edge_chamfer", "edge_distance", "chamfer", _DOWN, True),
        _metric("edge_emd", "edge_emd", None, _DOWN, True),
        _metric("edge_hausdorff", "edge_distance", "hausdorff", _DOWN, True),
        _metric("jaccard_distance", "cylinder", "jaccard_distance", _DOWN, True),
        _metric("jaccard_distance_flat", "cylinder", "jaccard_distance_flat", _DOWN, True),
        _metric("spectral", "spectral", "w2", _DOWN, True),
        _metric("spectral_l1", "spectral", "w1", _DOWN, True),
        _metric("spectral_l1_padded", "spectral", "l1_padded", _DOWN, True),
        _metric("spectral_l1_relative", "spectral", "l1_relative", _DOWN, False),
        _metric("spectral_normalised", "spectral", "w2_normed", _DOWN, True),
        _metric("spectral_normalised_squared", "spectral", "w2_normed_squared", _DOWN, True),
    ]
)


def get_metric_names() -> list[str]:
    return list(METRICS)


def evaluate_all(pred: Wireframe, gt: Wireframe, names: "list[str] | None" = None) -> dict[str, float]:
    """Scores of the named metrics (all by default), running each underlying computation once."""
    names = get_metric_names() if names is None else list(names)
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; choose from {', '.join(METRICS)}")
    results: dict[str, object] = {}
    out = {}
    for name in names:
        metric = METRICS[name]
        if metric.family not in results:
            results[metric.family] = METRIC_FAMILIES[metric.family](pred, gt)
        out[name] = metric.extract(results[metric.family])
    return out
