"""Reading a dataset's tables: question splits, and the vector drawings behind every drawing path.

Question columns come from ``spare_gen.stages.questions.schema`` and each task's spec; the few a loader reads by role (three-view
inputs, the isometric input, candidates, targets) are named there too.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.schema import (  # noqa: F401  (column roles, re-exported for the loaders)
    CANDIDATE_PREFIX, ISO_PREFIX, POINTS_COLUMN, POSE_COLUMN, TARGET_PREFIX, THREE_VIEW_PREFIXES,
)
from spare_gen.stages.questions.layout import SPLITS, task_name
from spare_gen.store import shards
from spare_gen.stages.drawings.schema import VIEWS_FILE
from spare_gen.rows import rows_from_table
from spare_gen.stages.questions.schema import (
    CUT_VIEWS_NAME, FILE_SOURCES_NAME, QUESTIONS_DIR, FileSourceRow, QuestionCommon, split_path,
)
from spare_gen.stages.questions.tasks import question_row

VIEWS_NAME = VIEWS_FILE
VECTOR_COLUMNS = ["svg", "png", "visible", "hidden"]


class Kind(str, Enum):
    """File kinds of a drawing column: ``<prefix>_svg`` and ``<prefix>_png``."""

    SVG = "svg"
    PNG = "png"


def check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    return split


def load_split(out: str | Path, task: TaskName | str, split: str, columns: list[str] | None = None) -> pa.Table:
    """``<out>/questions/<task>/<split>.parquet`` as a pyarrow Table (paths in it are relative to ``out``)."""
    task = task_name(task)
    path = split_path(Path(out), task.value, check_split(split))
    if not path.is_file():
        raise FileNotFoundError(f"no question file {path} (run the question stage, or check the task and split)")
    return pq.read_table(path, columns=columns)


def load_rows(out: str | Path, task: TaskName | str, split: str,
              columns: list[str] | None = None) -> list[QuestionCommon]:
    """The questions of a split as typed rows (``question_row(task)``; columns not read are null)."""
    return rows_from_table(question_row(task), load_split(out, task, split, columns))


def load_split_pandas(out: str | Path, task: TaskName | str, split: str, columns: list[str] | None = None):
    """``load_split(...).to_pandas()``."""
    return load_split(out, task, split, columns).to_pandas()


def three_view_columns(kind: str = Kind.PNG) -> dict[str, str]:
    """View name (f, r, t) -> column of its drawing path."""
    return {view: f"{prefix}_{Kind(kind).value}" for view, prefix in THREE_VIEW_PREFIXES.items()}


def available_tasks(out: str | Path) -> list[TaskName]:
    """Tasks with at least one split file under ``<out>/questions``."""
    return [t for t in TaskName if any(split_path(Path(out), t.value, s).is_file() for s in SPLITS)]


class DrawingVectors:
    """Polylines (canvas px) of every drawing, looked up by its SVG or PNG path relative to the dataset.

    Model drawings come from ``views.parquet``, cut-object drawings (three_view_to_isometric
    candidates) from ``questions/cut_views.parquet``; a per-question copy (``questions/file_sources.parquet``)
    has the vectors of its source. Holds plain numpy data only (picklable).
    """

    def __init__(self, rows: Iterable[dict], aliases: dict[str, str] | None = None):
        self._by_path: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        for r in rows:
            lines = (_polylines(r.get("visible")), _polylines(r.get("hidden")))
            for key in ("svg", "png"):
                if r.get(key):
                    self._by_path[r[key]] = lines
        for path, source in (aliases or {}).items():
            if source in self._by_path:
                self._by_path[path] = self._by_path[source]

    @classmethod
    def load(cls, out: str | Path, paths: Iterable[str] | None = None) -> "DrawingVectors":
        """Read the vector tables of ``out``, keeping only ``paths`` when given."""
        out = Path(out)
        sources_path = out / QUESTIONS_DIR / FILE_SOURCES_NAME
        aliases = ({r.path: r.source for r in rows_from_table(FileSourceRow, pq.read_table(sources_path))}
                   if sources_path.is_file() else {})
        wanted = None if paths is None else {aliases.get(p, p) for p in paths}
        rows: list[dict] = []
        for table_path in (out / VIEWS_NAME, out / QUESTIONS_DIR / CUT_VIEWS_NAME):
            if not shards.exists(table_path):
                continue
            if wanted is not None and not wanted:
                continue
            filters = None if wanted is None else [[("svg", "in", sorted(wanted))], [("png", "in", sorted(wanted))]]
            rows.extend(pq.read_table(table_path, columns=VECTOR_COLUMNS, filters=filters).to_pylist())
        return cls(rows, aliases)

    def __contains__(self, path: str) -> bool:
        return path in self._by_path

    def __len__(self) -> int:
        return len(self._by_path)

    def get(self, path: str) -> dict[str, list[np.ndarray]]:
        """``{"visible": [(k, 2) float64, ...], "hidden": [...]}`` of the drawing at ``path``."""
        if path not in self._by_path:
            raise KeyError(f"no vector drawing for {path!r} in {VIEWS_NAME} or {QUESTIONS_DIR}/{CUT_VIEWS_NAME}")
        visible, hidden = self._by_path[path]
        return {"visible": visible, "hidden": hidden}


def _polylines(value) -> list[np.ndarray]:
    if not value:
        return []
    return [np.asarray(line, dtype=np.float64).reshape(-1, 2) for line in value]
