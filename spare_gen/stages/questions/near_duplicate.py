"""The near-duplicate drawing rule: same PNG bytes, or symmetric chamfer distance of the vectors below a tolerance.

Drawings are compared as point sets sampled every ``SAMPLE_STEP_PX`` along their polylines (canvas px),
visible and hidden lines separately (a drawing that differs only in its red hidden lines is a different
drawing); the distance of two drawings is the larger of the two chamfer distances.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy.spatial import cKDTree

from spare_gen.stages.questions.layout import pose_view

SAMPLE_STEP_PX = 0.5


def sample_polylines(polylines: Iterable[Sequence[Sequence[float]]], step: float = SAMPLE_STEP_PX) -> np.ndarray:
    """Points every ``step`` px along each polyline, both ends included; (n, 2) float64.

    Each segment a->b of length L gives ``n = max(1, ceil(L / step))`` points ``a + (i / n) (b - a)``,
    i = 1..n, after the polyline's first point: one numpy pass over all segments of all polylines.
    """
    if step <= 0:
        raise ValueError(f"sampling step must be > 0 px (got {step!r})")
    lines = [np.asarray(line, dtype=np.float64).reshape(-1, 2) for line in polylines]
    lines = [pts for pts in lines if len(pts)]
    if not lines:
        return np.zeros((0, 2), np.float64)
    firsts = np.stack([pts[0] for pts in lines])
    starts = np.concatenate([pts[:-1] for pts in lines])
    deltas = np.concatenate([pts[1:] for pts in lines]) - starts
    counts = np.maximum(1, np.ceil(np.sqrt((deltas * deltas).sum(axis=1)) / step)).astype(np.int64)
    total = int(counts.sum())
    i = np.arange(1, total + 1) - np.repeat(np.cumsum(counts) - counts, counts)
    t = (i / np.repeat(counts, counts))[:, None]
    samples = np.repeat(starts, counts, axis=0) + t * np.repeat(deltas, counts, axis=0)
    # each polyline's first point, then its segments' samples, in polyline order
    n_segments = np.array([len(pts) - 1 for pts in lines])
    per_line = np.bincount(np.repeat(np.arange(len(lines)), n_segments), weights=counts,
                           minlength=len(lines)).astype(np.int64)
    line_starts = np.arange(len(lines)) + np.concatenate([[0], np.cumsum(per_line)[:-1]]).astype(np.int64)
    out = np.empty((len(lines) + len(samples), 2), np.float64)
    out[line_starts] = firsts
    mask = np.ones(len(out), bool)
    mask[line_starts] = False
    out[mask] = samples
    return out


def chamfer(a: np.ndarray, b: np.ndarray, tree_a: cKDTree | None = None, tree_b: cKDTree | None = None) -> float:
    """Symmetric chamfer distance: mean of the two mean nearest-neighbour distances (0 if both empty);
    ``tree_a`` / ``tree_b``: the points' KD-trees when already built."""
    if len(a) == 0 and len(b) == 0:
        return 0.0
    if len(a) == 0 or len(b) == 0:
        return math.inf
    d_ab = (tree_b or cKDTree(b)).query(a)[0].mean()
    d_ba = (tree_a or cKDTree(a)).query(b)[0].mean()
    return float((d_ab + d_ba) / 2.0)


@dataclass(frozen=True)
class Drawing:
    """A drawing reduced to what the rule compares: sampled visible and hidden points, and the PNG hash."""

    visible: np.ndarray
    hidden: np.ndarray
    png_sha256: str = ""

    @classmethod
    def from_view(cls, view: dict) -> "Drawing":
        """From a views.parquet row (``visible`` / ``hidden`` polylines in canvas px, ``png_sha256``)."""
        return cls(sample_polylines(view.get("visible") or []), sample_polylines(view.get("hidden") or []),
                   view.get("png_sha256") or "")

    @functools.cached_property
    def trees(self) -> tuple[cKDTree | None, cKDTree | None]:
        """KD-trees of the visible and hidden points, built once (a cut set compares each drawing several times)."""
        visible, hidden = (cKDTree(p) if len(p) else None for p in (self.visible, self.hidden))
        return visible, hidden

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "trees"}  # sent between processes without trees


def drawing_distance(a: Drawing, b: Drawing) -> float:
    """Larger of the visible-line and hidden-line chamfer distances (px)."""
    (va, ha), (vb, hb) = a.trees, b.trees
    return max(chamfer(a.visible, b.visible, va, vb), chamfer(a.hidden, b.hidden, ha, hb))


def _chamfer_reaches(a: np.ndarray, b: np.ndarray, tree_a: cKDTree | None, tree_b: cKDTree | None,
                     tolerance_px: float) -> bool:
    """``chamfer(a, b) >= tolerance_px``, the second mean computed only when the first does not decide it
    (half of a non-negative sum bounds it from below, exactly in floating point too)."""
    if len(a) == 0 or len(b) == 0:
        return (0.0 if len(a) == len(b) else math.inf) >= tolerance_px
    d_ab = (tree_b or cKDTree(b)).query(a)[0].mean()
    if d_ab / 2.0 >= tolerance_px:
        return True
    d_ba = (tree_a or cKDTree(a)).query(b)[0].mean()
    return float((d_ab + d_ba) / 2.0) >= tolerance_px


def near_duplicate(a: Drawing, b: Drawing, tolerance_px: float) -> bool:
    """True for identical PNG bytes or vectors closer than ``tolerance_px``: ``drawing_distance(a, b) <
    tolerance_px``, with the work stopped as soon as one line kind is known to be too far (the pose tasks compare
    28 pairs of drawings per model, cut sets every candidate with the accepted ones)."""
    if a.png_sha256 and a.png_sha256 == b.png_sha256:
        return True
    (va, ha), (vb, hb) = a.trees, b.trees
    kinds = sorted([(a.hidden, b.hidden, ha, hb), (a.visible, b.visible, va, vb)], key=lambda k: len(k[0]) + len(k[1]))
    return not any(_chamfer_reaches(*kind, tolerance_px) for kind in kinds)  # the cheaper line kind first


def duplicate_matrix(drawings: Sequence[Drawing], tolerance_px: float) -> np.ndarray:
    """Symmetric (n, n) bool matrix of near-duplicate pairs (diagonal False)."""
    n = len(drawings)
    dup = np.zeros((n, n), dtype=bool)
    for i, j in itertools.combinations(range(n), 2):
        dup[i, j] = dup[j, i] = near_duplicate(drawings[i], drawings[j], tolerance_px)
    return dup


def distinct_triples(dup: np.ndarray, query: int) -> list[tuple[int, int, int]]:
    """Index triples (sorted) of drawings distinct from ``query`` and from each other, in lexicographic order."""
    others = [i for i in range(len(dup)) if i != query and not dup[query, i]]
    return [
        t for t in itertools.combinations(others, 3)
        if not (dup[t[0], t[1]] or dup[t[0], t[2]] or dup[t[1], t[2]])
    ]


def pose_drawings(views: dict[str, dict], poses: tuple[int, ...]) -> list[Drawing]:
    """The drawings of isometric ``poses`` among a model's ``views`` (view -> polylines), in that order."""
    missing = [p for p in poses if pose_view(p) not in views]
    if missing:
        raise ValueError(f"model has no drawing for isometric pose(s) {missing}")
    return [Drawing.from_view(views[pose_view(p)]) for p in poses]
