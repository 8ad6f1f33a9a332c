"""Question-blind features of answer-side drawings: line statistics and small grey thumbnails.

A probe sees only what a shortcut could exploit: per candidate drawing (or, for isometric_to_pose,
the one isometric drawing) its ink, line counts and lengths, hidden/visible shares and framing; or
its pixels at 16 x 16. It never sees the F, R, T drawings or the query pose.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np
from PIL import Image

from spare_gen.config.schema import TaskName
from spare_gen.data.tables import DrawingVectors, Kind, load_split
from spare_gen.store.packed import drawing_bytes
from spare_gen.stages.questions.layout import AnswerSide
from spare_gen.stages.questions.schema import split_path
from spare_gen.stages.questions.tasks import TASK_SPECS

THUMBNAIL_SIDE = 16
CHROMA_THRESHOLD = 32  # max - min channel above this: a coloured (hidden-line) pixel in the red style
STAT_NAMES = (
    "ink_fraction", "coloured_ink_fraction", "darkness", "n_visible", "n_hidden", "hidden_line_share",
    "visible_length", "hidden_length", "hidden_length_share", "extent", "log_bbox_aspect", "bbox_fill",
)


class FeatureKind(str, Enum):
    """The two feature sets: per-drawing statistics, or 16 x 16 grey pixels."""

    STATS = "stats"
    PIXELS = "pixels"


Layout = AnswerSide  # each task's answer side is declared in its TaskSpec
LAYOUT: dict[TaskName, Layout] = {t: s.answer_side for t, s in TASK_SPECS.items() if s.answer_side is not None}


def _length(lines: list[np.ndarray]) -> float:
    return float(sum(np.linalg.norm(np.diff(p, axis=0), axis=1).sum() for p in lines if len(p) > 1))


def line_stats(visible: list[np.ndarray], hidden: list[np.ndarray], rgb: np.ndarray) -> np.ndarray:
    """The STAT_NAMES of one drawing: vectors in canvas px, ``rgb`` its (H, W, 3) uint8 raster."""
    rgb = np.asarray(rgb, dtype=np.int16)
    ink = (rgb < 255).any(axis=2)
    chroma = (rgb.max(axis=2) - rgb.min(axis=2)) > CHROMA_THRESHOLD
    darkness = 1.0 - rgb.mean() / 255.0
    n_vis, n_hid = len(visible), len(hidden)
    len_vis, len_hid = _length(visible), _length(hidden)
    points = np.concatenate([*visible, *hidden]) if n_vis + n_hid else np.zeros((0, 2))
    if len(points):
        w, h = np.ptp(points, axis=0)
    else:
        w = h = 0.0
    size = float(max(rgb.shape[:2]))
    return np.array([
        ink.mean(), chroma.mean(), darkness, n_vis, n_hid, n_hid / max(n_vis + n_hid, 1),
        len_vis, len_hid, len_hid / max(len_vis + len_hid, 1e-9), max(w, h) / size,
        np.log((w + 1.0) / (h + 1.0)), (w * h) / (size * size),
    ], dtype=np.float64)


def thumbnail(path: Path | bytes, side: int = THUMBNAIL_SIDE) -> np.ndarray:
    """(side * side,) darkness (1 - grey) of the drawing (a file or its bytes), area-averaged down to side x side."""
    with Image.open(io.BytesIO(path) if isinstance(path, bytes) else path) as im:
        grey = im.convert("L").resize((side, side), Image.Resampling.BOX)
    return 1.0 - np.asarray(grey, dtype=np.float64).ravel() / 255.0


@dataclass
class DrawingFeatures:
    """Feature vectors of drawings by path (relative to ``out``), computed once each."""

    out: Path
    vectors: DrawingVectors

    def __post_init__(self):
        self._cache: dict[tuple[str, FeatureKind], np.ndarray] = {}

    def __call__(self, png: str, svg: str, kind: FeatureKind) -> np.ndarray:
        key = (png, kind)
        if key not in self._cache:
            if kind is FeatureKind.PIXELS:
                self._cache[key] = thumbnail(drawing_bytes(self.out, png))
            else:
                with Image.open(io.BytesIO(drawing_bytes(self.out, png))) as im:
                    rgb = np.asarray(im.convert("RGB"))
                lines = self.vectors.get(svg)
                self._cache[key] = line_stats(lines["visible"], lines["hidden"], rgb)
        return self._cache[key]


def feature_names(kind: FeatureKind) -> list[str]:
    if kind is FeatureKind.STATS:
        return list(STAT_NAMES)
    return [f"px_{i // THUMBNAIL_SIDE}_{i % THUMBNAIL_SIDE}" for i in range(THUMBNAIL_SIDE ** 2)]


def answer_side_paths(table, task: TaskName) -> list[tuple[list[str], list[str]]]:
    """Per question: (PNG paths, SVG paths) of its answer-side drawings (4 candidates, or the isometric input)."""
    prefix = TASK_SPECS[task].answer_side_prefix
    pngs = table.column(f"{prefix}_{Kind.PNG.value}").to_pylist()
    svgs = table.column(f"{prefix}_{Kind.SVG.value}").to_pylist()
    if LAYOUT[task] is Layout.CANDIDATES:
        return [(list(p), list(s)) for p, s in zip(pngs, svgs)]
    return [([p], [s]) for p, s in zip(pngs, svgs)]


def _answer_side(out: Path, task: TaskName, split: str, rows: tuple[int, int] | None):
    """The split's answer and answer-side columns, only rows [start, stop) when ``rows`` is given."""
    prefix = TASK_SPECS[task].answer_side_prefix
    table = load_split(out, task, split, ["answer", f"{prefix}_{Kind.PNG.value}", f"{prefix}_{Kind.SVG.value}"])
    return table if rows is None else table.slice(rows[0], rows[1] - rows[0])


def split_features(out: Path, task: TaskName, split: str, kind: FeatureKind, features: DrawingFeatures,
                   rows: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X, answers): X is (n, 4, d) per candidate, or (n, d) for the one drawing of a CLASSES task.

    ``rows`` = (start, stop) reads only those questions. A split without a file (the question stage writes none
    for an empty split) gives n = 0.
    """
    d = len(feature_names(kind))
    if not split_path(out, task.value, split).is_file():
        empty = np.zeros((0, d) if LAYOUT[task] is Layout.CLASSES else (0, 4, d))
        return empty, np.zeros(0, dtype=np.int64)
    table = _answer_side(out, task, split, rows)
    paths = answer_side_paths(table, task)
    answers = np.asarray(table.column("answer").to_pylist(), dtype=np.int64)
    x = np.array([[features(p, s, kind) for p, s in zip(pngs, svgs)] for pngs, svgs in paths],
                 dtype=np.float64).reshape(len(paths), -1, d)
    return (x[:, 0, :] if LAYOUT[task] is Layout.CLASSES else x), answers


def needed_svgs(out: Path, tasks: list[TaskName], splits: tuple[str, ...], rows: tuple[int, int] | None = None
                ) -> list[str]:
    """SVG paths of every answer-side drawing the audit reads (to load only those vectors); ``rows`` as in
    ``split_features``."""
    paths: list[str] = []
    for task in tasks:
        for split in splits:
            if not split_path(out, task.value, split).is_file():
                continue
            for _, svgs in answer_side_paths(_answer_side(out, task, split, rows), task):
                paths.extend(svgs)
    return paths
