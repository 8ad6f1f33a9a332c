"""Edge geometry shared by the wireframe metrics: cleaned edges, point-to-segment distances, arc-length samples.

Every metric sees a wireframe's edges through :func:`clean_edges`, so duplicate edges, reversed duplicates,
self-loops and zero-length edges are handled the same way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from spare_gen.wireframe import Wireframe

#: Edges not longer than this (in normalised units) have no geometry and are ignored by every metric.
MIN_EDGE_LENGTH = 1e-12


def clean_edges(wf: Wireframe) -> np.ndarray:
    """(K, 2) unique direction-free edges (i < j) of positive length, sorted; duplicates count once.

    Cached on the wireframe's bytes (every metric family asks for the same wireframe's edges); the caller
    gets its own copy.
    """
    if wf.n_edges == 0:
        return np.zeros((0, 2), dtype=np.int64)
    vertices = np.ascontiguousarray(wf.vertices, dtype=np.float64)
    edges = np.ascontiguousarray(wf.edges, dtype=np.int64)
    return _clean_edges_cached(vertices.tobytes(), edges.tobytes(), len(vertices)).copy()


@lru_cache(maxsize=64)
def _clean_edges_cached(vertices: bytes, edges: bytes, n_vertices: int) -> np.ndarray:
    wf = Wireframe(np.frombuffer(vertices).reshape(n_vertices, 3), np.frombuffer(edges, dtype=np.int64).reshape(-1, 2))
    edges = np.unique(wf.canonical_edges(), axis=0)
    edges = edges[edges[:, 0] != edges[:, 1]]
    if len(edges) == 0:
        return edges
    seg = wf.vertices[edges]
    lengths = np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1)
    return edges[lengths > MIN_EDGE_LENGTH]


def clean_segments(wf: Wireframe) -> np.ndarray:
    """(K, 2, 3) end points of :func:`clean_edges`."""
    return wf.vertices[clean_edges(wf)].reshape(-1, 2, 3)


def point_segment_distance(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distance from ``points`` to segments ``a``-``b`` (all broadcast over leading axes, last axis 3)."""
    ab = b - a
    ap = points - a
    denom = np.einsum("...k,...k->...", ab, ab)
    num = np.einsum("...k,...k->...", ap, ab)
    t = np.divide(num, denom, out=np.zeros(np.broadcast(num, denom).shape), where=denom > 0)
    t = np.clip(t, 0.0, 1.0)
    return np.linalg.norm(ap - t[..., None] * ab, axis=-1)


def segment_hausdorff(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Exact Hausdorff distance between paired segments ``s[k]`` and ``t[k]`` (each (K, 2, 3)).

    The distance to a segment is convex along the other segment, so its maximum sits at an end point:
    the Hausdorff distance is the largest of the four end-point-to-segment distances.
    """
    d = [
        point_segment_distance(s[:, 0], t[:, 0], t[:, 1]),
        point_segment_distance(s[:, 1], t[:, 0], t[:, 1]),
        point_segment_distance(t[:, 0], s[:, 0], s[:, 1]),
        point_segment_distance(t[:, 1], s[:, 0], s[:, 1]),
    ]
    return np.max(np.stack(d), axis=0)


def segment_boxes(segments: np.ndarray) -> np.ndarray:
    """(K, 6) axis-aligned boxes (min xyz, max xyz).

    If two segments are within Hausdorff distance h, each lies in the other's box grown by h, so their box
    vectors differ by at most h in the max-norm: a KD-tree on these 6-D points finds all candidates exactly.
    """
    return np.concatenate([segments.min(axis=1), segments.max(axis=1)], axis=1)


@dataclass(frozen=True)
class EdgeSamples:
    """Points evenly spaced by arc length along edges, each with the edge length it stands for."""

    points: np.ndarray  # (P, 3)
    weights: np.ndarray  # (P,) arc length represented by each point; sums to the total edge length
    segment_index: np.ndarray  # (P,) row of the segment array each point lies on
    piece_index: np.ndarray | None = None  # (P,) which piece of its segment the point is the midpoint of
    piece_count: np.ndarray | None = None  # (K,) pieces per segment


def sample_segments(segments: np.ndarray, spacing: float) -> EdgeSamples:
    """Split every segment into ``ceil(length / spacing)`` equal pieces and take each piece's midpoint.

    Deterministic (no generator needed); pieces are at most ``spacing`` long, so any point of an edge is
    within ``spacing / 2`` of a sample.
    """
    if spacing <= 0:
        raise ValueError(f"sample spacing must be positive, got {spacing!r}")
    if len(segments) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return EdgeSamples(np.zeros((0, 3)), np.zeros(0), empty, empty, empty)
    a, b = segments[:, 0], segments[:, 1]
    lengths = np.linalg.norm(b - a, axis=1)
    counts = np.maximum(1, np.ceil(lengths / spacing).astype(np.int64))
    seg_idx = np.repeat(np.arange(len(segments)), counts)
    starts = np.cumsum(counts) - counts
    within = np.arange(len(seg_idx)) - starts[seg_idx]
    t = (within + 0.5) / counts[seg_idx]
    points = a[seg_idx] + t[:, None] * (b - a)[seg_idx]
    weights = (lengths / counts)[seg_idx]
    return EdgeSamples(points, weights, seg_idx, within, counts)
