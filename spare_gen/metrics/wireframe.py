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

from enum import Enum

import numpy as np
from scipy.spatial import cKDTree

from spare_gen.metrics.matching import match_candidates, match_points, prf
from spare_gen.metrics.sampling import (
    clean_segments,
    sample_segments,
    segment_boxes,
    segment_hausdorff,
)
from spare_gen.wireframes.model import CORNER, Wireframe

CORNER_THRESHOLD = 0.02  # a predicted corner matches a GT corner closer than this
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
