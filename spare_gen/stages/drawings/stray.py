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
# a view is plainly within STRAY_PX when each drawn sample has a reference sample in its 3 x 3 cells of this size
# (canvas px): no farther than 2 x sqrt(2) cells, kept under STRAY_PX by a hair for rounding
GRID_CELL_PX = 0.999 * STRAY_PX / (2 * 2 ** 0.5)
GRID_CELLS = 4_000_000  # a larger grid (a huge canvas) is not laid: the KD-tree decides


def densify(polylines: list[np.ndarray] | np.ndarray, spacing: float) -> np.ndarray:
    """(n, d) points along ``polylines`` (each (k, d); or one (m, k, d) array of them), no two neighbours more than
    ``spacing`` apart: every polyline's pieces in order, then every polyline's last point. One numpy pass over all."""
    if isinstance(polylines, np.ndarray):  # equal lengths: no Python pass per polyline
        if not polylines.size:
            return np.zeros((0, polylines.shape[-1] if polylines.ndim == 3 else 2))
        points = polylines.reshape(-1, polylines.shape[-1])
        ends = np.arange(polylines.shape[1] - 1, len(points), polylines.shape[1])
    else:
        lines = [p for p in polylines if len(p)]
        if not lines:
            return np.zeros((0, polylines[0].shape[1] if polylines else 2))
        points = np.concatenate(lines)
        ends = np.cumsum([len(p) for p in lines]) - 1  # each polyline's last point
    inside = np.ones(len(points) - 1, dtype=bool)
    inside[ends[:-1]] = False  # no piece from one polyline's end to the next one's start
    starts = points[:-1][inside]
    steps = (points[1:] - points[:-1])[inside]
    counts = np.maximum(1, np.ceil(np.linalg.norm(steps, axis=1) / spacing)).astype(np.int64)
    which = np.repeat(np.arange(len(starts)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    t = (np.arange(len(which)) - first) / np.repeat(counts, counts)
    return np.concatenate([starts[which] + steps[which] * t[:, None], points[ends]])


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

    def reference(self, pose: Pose) -> np.ndarray:
        """(n, 2) the projected reference of one view: edges and the folds on its silhouette."""
        _, folds = self.hlr.outline
        silhouette = folds.silhouette(np.asarray(pose.direction, dtype=float))
        rims = densify(pose.project(silhouette.reshape(-1, 3)).reshape(-1, 2, 2), self.spacing)
        return np.concatenate([pose.project(self.edges).reshape(-1, 2), rims])

    def tree(self, pose: Pose) -> cKDTree:
        """The projected reference of one view as a KD-tree."""
        return cKDTree(self.reference(pose))

    def _judged(self, lines: ViewLines) -> np.ndarray | None:
        """The drawn samples, or None where no line can be called stray (nothing drawn, no edges). A partly meshed
        curved face (``Folds.complete``: where its silhouettes lie is unknown) calls no line stray either; that is
        asked only of a view not plainly within STRAY_PX, as it costs an area integral per curved face."""
        drawn = densify(lines.visible + lines.hidden, self.spacing)
        return drawn if len(drawn) and len(self.edges) else None

    def _silhouettes_known(self) -> bool:
        return self.hlr.outline[1].complete

    def _distance_px(self, drawn: np.ndarray, reference: np.ndarray) -> float:
        tree = cKDTree(reference)
        distance, _ = tree.query(drawn, k=1, distance_upper_bound=STRAY_PX / self.px_per_unit)  # fast: most are near
        far = ~np.isfinite(distance)
        if far.any():  # measured exactly for the reason
            distance[far] = tree.query(drawn[far], k=1)[0]
        return float(distance.max()) * self.px_per_unit

    def stray_px(self, lines: ViewLines, pose: Pose) -> float:
        """Largest distance (canvas px) of the drawn lines from the model's projected edges and silhouettes."""
        drawn = self._judged(lines)
        if drawn is None or not self._silhouettes_known():
            return 0.0
        return self._distance_px(drawn, self.reference(pose))

    def stray_beyond_px(self, lines: ViewLines, pose: Pose) -> float:
        """``stray_px`` where it may exceed STRAY_PX; 0.0 for a view that is plainly within it.

        Plainly within: every drawn sample has a reference sample in its own or a neighbouring cell of a grid of
        GRID_CELL_PX, so none lies more than 2 x sqrt(2) x GRID_CELL_PX < STRAY_PX from the reference (a drawn line
        on a model edge has reference samples SPACING_PX apart along it, so a right view passes); otherwise, or on
        a grid of more than GRID_CELLS, the KD-tree measures every sample as ``stray_px`` does.
        """
        drawn = self._judged(lines)
        if drawn is None:
            return 0.0
        reference = self.reference(pose)
        if _plainly_near(drawn, reference, GRID_CELL_PX / self.px_per_unit) or not self._silhouettes_known():
            return 0.0
        return self._distance_px(drawn, reference)


def _plainly_near(drawn: np.ndarray, reference: np.ndarray, cell: float) -> bool:
    """Whether every drawn point has a reference point in its own or one of the 8 neighbouring cells of a grid of
    ``cell`` (model units) laid on the reference's box; False for any drawn point off that box."""
    lo = reference.min(axis=0)
    ref = np.floor((reference - lo) / cell).astype(np.int64) + 1  # a margin of one empty cell on each side
    shape = ref.max(axis=0) + 2
    at = np.floor((drawn - lo) / cell)
    if shape.prod() > GRID_CELLS or not ((at >= -1).all() and (at < shape - 1).all()):  # NaN fails too
        return False
    grid = np.zeros(shape, dtype=bool)
    grid[ref[:, 0], ref[:, 1]] = True
    grid[1:] |= grid[:-1].copy()  # the 3 x 3 neighbourhood, one axis at a time (both ways)
    grid[:-1] |= grid[1:].copy()
    grid[:, 1:] |= grid[:, :-1].copy()
    grid[:, :-1] |= grid[:, 1:].copy()
    at = at.astype(np.int64) + 1
    return bool(grid[at[:, 0], at[:, 1]].all())
