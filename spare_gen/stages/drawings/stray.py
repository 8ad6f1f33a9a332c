"""Stray lines: a drawn line must lie on the projection of the model's own edges or silhouettes.

Exact HLR has been seen to return straight lines that match no edge of the part, reaching 16.5 px outside it.
The reference is sampled once per model in 3D (every edge, loose ones too, densified to ``SPACING_PX`` canvas
pixels: an orthographic projection never lengthens a segment) and projected per view, with the mesh's folds
that lie on that view's silhouette (``cad.hlr_shape.Folds``). Drawn polylines are densified the same way, and
each sample's distance to the nearest reference sample (a KD-tree) must stay within ``STRAY_PX``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from spare_gen.cad.hlr import HlrModel, ViewLines
from spare_gen.canvas.poses import Pose

STRAY_PX = 3.0  # a drawn sample may lie this many canvas px from the model's projected edges and silhouettes
SPACING_PX = 1.0  # samples along both, at most this many canvas px apart (more where the cap below needs it)
MAX_SAMPLES = 400_000  # reference samples of one model at most: a finer spacing would cost more than HLR


def densify(polylines: list[np.ndarray], spacing: float) -> np.ndarray:
    """(n, d) points along ``polylines`` (each (k, d)), no two neighbours more than ``spacing`` apart."""
    lines = [p for p in polylines if len(p)]
    if not lines:
        return np.zeros((0, polylines[0].shape[1] if polylines else 2))
    starts = np.concatenate([p[:-1] for p in lines])
    steps = np.concatenate([np.diff(p, axis=0) for p in lines])
    counts = np.maximum(1, np.ceil(np.linalg.norm(steps, axis=1) / spacing)).astype(np.int64)
    which = np.repeat(np.arange(len(starts)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    t = (np.arange(len(which)) - first) / np.repeat(counts, counts)
    return np.concatenate([starts[which] + steps[which] * t[:, None], *(p[-1:] for p in lines)])


def _spacing(polylines: list[np.ndarray], spacing: float) -> float:
    """``spacing``, grown so that densifying ``polylines`` gives at most MAX_SAMPLES points."""
    length = sum(float(np.linalg.norm(np.diff(p, axis=0), axis=1).sum()) for p in polylines if len(p) > 1)
    return max(spacing, length / MAX_SAMPLES)


@dataclass(frozen=True)
class Outline:
    """A model's edges (densified 3D samples) and mesh folds, and the sampling step in model units."""

    edges: np.ndarray  # (n, 3)
    hlr: HlrModel
    spacing: float  # model units between samples
    px_per_unit: float

    @classmethod
    def of(cls, hlr: HlrModel, px_per_unit: float) -> "Outline":
        polylines, _ = hlr.outline
        spacing = _spacing(polylines, SPACING_PX / px_per_unit)
        return cls(densify(polylines, spacing) if polylines else np.zeros((0, 3)), hlr, spacing, px_per_unit)

    def tree(self, pose: Pose) -> cKDTree:
        """The projected reference of one view: edges and the folds on its silhouette."""
        _, folds = self.hlr.outline
        silhouette = folds.silhouette(np.asarray(pose.direction, dtype=float))
        rims = densify(list(pose.project(silhouette.reshape(-1, 3)).reshape(-1, 2, 2)), self.spacing)
        return cKDTree(np.concatenate([pose.project(self.edges).reshape(-1, 2), rims]))

    def stray_px(self, lines: ViewLines, pose: Pose) -> float:
        """Largest distance (canvas px) of the drawn lines from the model's projected edges and silhouettes."""
        drawn = densify(lines.visible + lines.hidden, self.spacing)
        if not len(drawn) or not len(self.edges) or not self.hlr.outline[1].complete:
            return 0.0  # a partly meshed curved face: where its silhouettes lie is unknown
        tree = self.tree(pose)
        distance, _ = tree.query(drawn, k=1, distance_upper_bound=STRAY_PX / self.px_per_unit)  # fast: most are near
        far = ~np.isfinite(distance)
        if far.any():  # measured exactly for the reason
            distance[far] = tree.query(drawn[far], k=1)[0]
        return float(distance.max()) * self.px_per_unit
