"""Questions as numpy: drawings decoded from PNG (float32 RGB in [0, 1]) or as vector polylines, per task.

An item is a dict: ``question_id, task, split, model_id, n_primitives`` (None for file models), the
three input views under ``views`` ({"f", "r", "t"}), and by task ``iso`` (isometric_to_pose),
``pose`` (pose_to_isometric, 1..8), ``candidates`` (4 drawings in answer order), ``answer`` (0..3),
``target`` (a drawing, or the (n, 3) float32 point cloud). A PNG drawing is (H, W, 3) float32 and a
candidate set (4, H, W, 3); a vector drawing is ``{"visible": [(k, 2)], "hidden": [(k, 2)]}`` in canvas px.
"""

from __future__ import annotations

import io
from enum import Enum
from pathlib import Path
from typing import Iterator

import numpy as np
from PIL import Image

from spare_gen.config.schema import TaskName
from spare_gen.data.tables import DrawingVectors, Kind, load_split
from spare_gen.store.packed import drawing_bytes
from spare_gen.rows import rows_from_table
from spare_gen.stages.questions.schema import QuestionCommon
from spare_gen.stages.questions.layout import task_name
from spare_gen.stages.questions.spec import TargetKind
from spare_gen.stages.questions.tasks import TASK_SPECS, question_row

# Pillow's bilinear filter widens its support when shrinking, so a downsampled thin line keeps its ink.
RESAMPLE = Image.Resampling.BILINEAR


class Source(str, Enum):
    """Where drawings come from: decoded PNG rasters, or the vector polylines of the tables."""

    PNG = "png"
    VECTORS = "vectors"


def image_size(size: int | tuple[int, int] | None) -> tuple[int, int] | None:
    """``size`` as (height, width): an int means a square."""
    if size is None:
        return None
    h, w = (size, size) if isinstance(size, int) else tuple(size)
    if int(h) < 1 or int(w) < 1:
        raise ValueError(f"image size must be positive, got {size!r}")
    return int(h), int(w)


def decode_rgb(path: str | Path | bytes, size: int | tuple[int, int] | None = None) -> Image.Image:
    """A PNG (a file, or its bytes) as an RGB Pillow image, resized to ``size`` (int or (height, width)) if given."""
    hw = image_size(size)
    with Image.open(io.BytesIO(path) if isinstance(path, bytes) else path) as im:
        rgb = im.convert("RGB")
    if hw is not None and rgb.size != (hw[1], hw[0]):
        rgb = rgb.resize((hw[1], hw[0]), RESAMPLE)
    return rgb


def to_unit_float(pixels: np.ndarray) -> np.ndarray:
    """uint8 pixels as float32 in [0, 1]: the one conversion every loader uses (the feed does it on the device)."""
    return pixels.astype(np.float32) / np.float32(255.0)


def read_image(path: str | Path | bytes, size: int | tuple[int, int] | None = None) -> np.ndarray:
    """A PNG (a file, or its bytes) as (H, W, 3) float32 RGB in [0, 1], resized to ``size`` (int or (height,
    width)) if given."""
    return to_unit_float(np.asarray(decode_rgb(path, size)))


class QuestionReader:
    """Turns question rows of one task into items; holds only paths and plain data (picklable)."""

    def __init__(self, out: str | Path, task: TaskName | str, *, size: int | tuple[int, int] | None = None,
                 source: Source | str = Source.PNG, vectors: DrawingVectors | None = None):
        self.out = Path(out)
        self.task = task_name(task)
        self.size = image_size(size)
        self.source = Source(source)
        if self.source is Source.VECTORS and vectors is None:
            vectors = DrawingVectors.load(self.out)
        self.vectors = vectors

    def _kind(self) -> Kind:
        return Kind.PNG if self.source is Source.PNG else Kind.SVG

    def drawing(self, rel_path: str):
        """One drawing by its path relative to the dataset: an image or a vector dict."""
        if rel_path is None:
            raise ValueError(f"a {self.task.value} question names no file for a drawing (PNG output disabled?)")
        if self.source is Source.PNG:
            return read_image(drawing_bytes(self.out, rel_path), self.size)  # a file, or packed (render.store)
        return self.vectors.get(rel_path)

    def drawings(self, rel_paths: list[str]):
        items = [self.drawing(p) for p in rel_paths]
        return np.stack(items) if self.source is Source.PNG else items

    def item(self, row: QuestionCommon) -> dict:
        """The item of one question row (see the module docstring for its keys)."""
        kind = self._kind().value
        item: dict = {"question_id": row.question_id, "task": row.task, "split": row.split, "model_id": row.model_id,
                      "n_primitives": row.n_primitives}
        item["views"] = {v: self.drawing(rel) for v, rel in row.three_views(kind).items()}
        keys = TASK_SPECS[self.task].loader
        for key, prefix in keys.drawing.items():
            item[key] = self.drawing(row.drawing(prefix, kind))
        if keys.pose is not None:
            item["pose"] = keys.query_pose(row)
        if keys.candidates is not None:
            item["candidates"] = self.drawings(list(row.drawing(keys.candidates, kind)))
        answer = row.correct_answer()
        if answer is not None:
            item["answer"] = answer
        if keys.target is TargetKind.DRAWING and keys.target_column:
            item["target"] = self.drawing(row.drawing(keys.target_column, kind))
        elif keys.target is TargetKind.POINTS:
            item["target"] = np.asarray(keys.target_points(row), dtype=np.float32).reshape(-1, 3)
        return item


def iter_questions(
    out: str | Path, task: TaskName | str, split: str, *, size: int | tuple[int, int] | None = None,
    source: Source | str = "png",
) -> Iterator[dict]:
    """Yield every question of a task split as a dict of numpy arrays, in file order."""
    table = load_split(out, task, split)
    vectors = DrawingVectors.load(out, svg_paths(table)) if Source(source) is Source.VECTORS else None
    reader = QuestionReader(out, task, size=size, source=source, vectors=vectors)
    for row in rows_from_table(question_row(task), table):
        yield reader.item(row)


def svg_paths(table) -> list[str]:
    """Every SVG path a question table names (single paths and candidate lists)."""
    return [p for col in table.column_names if col.endswith(f"_{Kind.SVG.value}")
            for v in table.column(col).to_pylist() for p in (v if isinstance(v, list) else [v]) if p]
