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
from functools import partial
from typing import Callable

import numpy as np
from scipy.spatial import cKDTree

from spare_gen.metrics.cylinders import CYLINDER_RADIUS, cylinder_iou
from spare_gen.metrics.matching import match_candidates, match_points, prf
from spare_gen.metrics.sampling import (
    clean_segments,
    sample_segments,
    segment_boxes,
    segment_hausdorff,
)
from spare_gen.metrics.spectral import spectral_distance
from spare_gen.metrics.wed import wed
from spare_gen.wireframes.model import CORNER, Wireframe

__all__ = [
    "CORNER_THRESHOLD", "EDGE_THRESHOLD", "SAMPLE_SPACING", "EMPTY_DISTANCE", "CYLINDER_RADIUS",
    "VertexSelection", "Direction", "Metric", "METRICS", "FAMILIES",
    "corner_prf", "edge_prf", "wed", "edge_chamfer", "edge_hausdorff", "cylinder_iou", "spectral_distance",
    "get_metric_names", "evaluate_all",
]

CORNER_THRESHOLD = 0.02  # a predicted corner matches a GT corner at most this far away
EDGE_THRESHOLD = 0.02  # a predicted edge matches a GT edge within this segment-to-segment Hausdorff distance
SAMPLE_SPACING = 0.005  # arc-length spacing of edge samples for chamfer / Hausdorff
EMPTY_DISTANCE = 1.0  # chamfer / Hausdorff between an empty and a non-empty wireframe: one bbox diagonal


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
    return wf.vertices[wf.kinds == CORNER]


def corner_prf(
    pred: Wireframe, gt: Wireframe, threshold: float = CORNER_THRESHOLD, kinds: str = "corners"
) -> dict[str, float]:
    """Corner precision, recall and F1: one-to-one Hungarian matching of vertices closer than ``threshold``.

    ``kinds="corners"`` (default) compares only CORNER-kind vertices: CURVE vertices are where a curved
    edge happened to be cut into segments, so counting them would reward or punish the discretisation
    rather than the shape; ``kinds="all"`` compares every vertex. Among matchings the largest is used
    (no match is lost to a greedy or unthresholded assignment).
    """
    sel = _selection(kinds)
    p, g = _selected_vertices(pred, sel), _selected_vertices(gt, sel)
    rows, _ = match_points(p, g, threshold)
    return prf(len(rows), len(p), len(g))


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


def _edge_samples(wf: Wireframe, spacing: float):
    return sample_segments(clean_segments(wf), spacing)


def _directed_distances(pred: Wireframe, gt: Wireframe, spacing: float):
    """Nearest-sample distances both ways, with the arc-length weights of the querying samples."""
    a, b = _edge_samples(pred, spacing), _edge_samples(gt, spacing)
    if len(a.points) == 0 or len(b.points) == 0:
        return None, a, b
    d_ab = cKDTree(b.points).query(a.points)[0]
    d_ba = cKDTree(a.points).query(b.points)[0]
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


# ---------------------------------------------------------------------------------------------- registry


class Direction(str, Enum):
    """Whether a larger score means a better prediction."""

    HIGHER_IS_BETTER = "higher"
    LOWER_IS_BETTER = "lower"


Family = Callable[[Wireframe, Wireframe], "dict[str, float] | float"]

#: Metric computations run once per (pred, gt) even when they feed several registry entries.
FAMILIES: dict[str, Family] = {
    "corner": corner_prf,
    "edge": edge_prf,
    "wed": wed,
    "wed_prereg": partial(wed, preregister=True),
    "wed_mnn": partial(wed, assignment="mnn"),
    "edge_chamfer": edge_chamfer,
    "edge_hausdorff": edge_hausdorff,
    "cylinder": cylinder_iou,
    "spectral": spectral_distance,
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
        return self.extract(FAMILIES[self.family](pred, gt))

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
        _metric("wed", "wed", None, _DOWN, False),
        _metric("wed_prereg", "wed_prereg", None, _DOWN, False),
        _metric("wed_mnn", "wed_mnn", None, _DOWN, False),
        _metric("edge_chamfer", "edge_chamfer", None, _DOWN, True),
        _metric("edge_hausdorff", "edge_hausdorff", None, _DOWN, True),
        _metric("jaccard_distance", "cylinder", "jaccard_distance", _DOWN, True),
        _metric("spectral", "spectral", None, _DOWN, True),
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
            results[metric.family] = FAMILIES[metric.family](pred, gt)
        out[name] = metric.extract(results[metric.family])
    return out
