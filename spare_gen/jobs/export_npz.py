"""Export one task split as a compressed .npz of fixed-size arrays, for training outside spare_gen.

``spare-gen export OUT --task T [--split S] [--size 64] [--dest file.npz]``. Arrays (N
questions): ``question_id`` (N,) str, ``n_primitives`` (N,) int16 (-1 for file models), ``views``
(N, 3, H, W, 3) uint8 in the order F, R, T, and by task ``iso`` (N, H, W, 3), ``pose`` (N,) int8 (1..8),
``candidates`` (N, 4, H, W, 3), ``answer`` (N,) int8, ``target`` (N, H, W, 3) uint8 or (N, n, 3)
float32 points. Images are the PNGs resized like the loaders do (``spare_gen.data.loaders``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from spare_gen.atomic import with_tmp_path
from spare_gen.data.loaders import iter_questions
from spare_gen.data.tables import THREE_VIEW_PREFIXES
from spare_gen.jobs.defaults import EXPORT_SIZE
from spare_gen.stages.questions.layout import task_name
from spare_gen.stages.questions.spec import TargetKind
from spare_gen.stages.questions.tasks import TASK_SPECS

DEFAULT_SIZE = EXPORT_SIZE
EXPORTS_DIR = "exports"


def to_uint8(image: np.ndarray) -> np.ndarray:
    return np.round(np.clip(image, 0.0, 1.0) * 255.0).astype(np.uint8)


def split_arrays(out: Path, task: str, split: str, size: int = DEFAULT_SIZE) -> dict[str, np.ndarray]:
    """The export's arrays (see the module docstring)."""
    columns: dict[str, list] = {}
    points = TASK_SPECS[task_name(task)].loader.target is TargetKind.POINTS
    for item in iter_questions(out, task, split, size=size):
        n_prim = item["n_primitives"]
        row = {"question_id": item["question_id"], "n_primitives": -1 if n_prim is None else int(n_prim),
               "views": np.stack([to_uint8(item["views"][v]) for v in THREE_VIEW_PREFIXES])}
        if "iso" in item:
            row["iso"] = to_uint8(item["iso"])
        for key in ("pose", "answer"):
            if key in item:
                row[key] = item[key]
        if "candidates" in item:
            row["candidates"] = to_uint8(item["candidates"])
        if "target" in item:
            row["target"] = item["target"].astype(np.float32) if points else to_uint8(item["target"])
        for key, value in row.items():
            columns.setdefault(key, []).append(value)
    dtypes = {"question_id": np.str_, "n_primitives": np.int16, "pose": np.int8, "answer": np.int8}
    return {k: np.asarray(v, dtype=dtypes.get(k)) for k, v in columns.items()}


def export(out: Path, task: str, split: str, size: int = DEFAULT_SIZE, dest: Path | None = None) -> Path:
    """Write the split's arrays to ``dest`` (default ``<out>/exports/<task>_<split>_<size>.npz``)."""
    task = task_name(task).value
    dest = Path(dest) if dest else Path(out) / EXPORTS_DIR / f"{task}_{split}_{size}.npz"
    arrays = split_arrays(Path(out), task, split, size)
    if not arrays:
        raise ValueError(f"{task}/{split} has no questions to export")

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:  # a file object: numpy would append ".npz" to a bare temporary name
            # mypy maps **arrays onto the stub's ``allow_pickle: bool`` too; naming allow_pickle instead is no fix:
            # numpy 1.26 (allowed) has no such parameter and would store it as an array named "allow_pickle"
            np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]

    return with_tmp_path(dest, write)
