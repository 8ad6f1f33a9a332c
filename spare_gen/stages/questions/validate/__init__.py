"""The question-set rules of ``spare-gen validate`` (``spare_gen.validate`` checks tables and files first).

Works from the files alone (question Parquet, manifest, summary, models/drawings/views tables), so it
catches a dataset edited by hand: a deleted or changed file, two identical candidates, a model in two
splits, an unbalanced answer column, a wrong answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.stages.drawings.schema import DRAWINGS_FILE, VIEWS_FILE, DrawingRow
from spare_gen.stages.models.schema import MODELS_FILE, ModelRow
from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.dataset import LoadedDataset
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.schema import (
    CUT_VIEWS_NAME, FILE_SOURCES_NAME, MANIFEST_NAME, QUESTIONS_DIR, SUMMARY_NAME, FileSourceRow, ManifestRow,
    QuestionCommon, split_path,
)
from spare_gen.rows import rows_from_table
from spare_gen.stages.questions.tasks import TASKS, question_row
from spare_gen.stages.questions.validate.checks import CHECKS

VECTOR_COLUMNS = ["model_id", "view", "svg", "png", "png_sha256", "visible", "hidden"]


def _table(path: Path, **kw) -> pa.Table:
    return pq.read_table(path, **kw)


def _rows(path: Path, **kw) -> list[dict]:
    return _table(path, **kw).to_pylist()


def _question_rows(task: TaskName, table: pa.Table) -> tuple[list[QuestionCommon], list[str]]:
    """The task's typed rows of a split table, and the names of columns its row class does not declare (a table
    edited by hand), which are left out."""
    row = question_row(task)
    unknown = [name for name in table.column_names if name not in row.__dataclass_fields__]
    return rows_from_table(row, table.drop_columns(unknown)), unknown


def load(out: Path) -> tuple[LoadedDataset | None, list[str]]:
    """The dataset, or None and the reasons it cannot be loaded."""
    out = Path(out)
    summary_path = out / QUESTIONS_DIR / SUMMARY_NAME
    if not summary_path.is_file():
        return None, [f"load: {summary_path} does not exist (no question stage output here)"]
    summary = json.loads(summary_path.read_text())
    problems: list[str] = []
    rows: dict[str, dict[str, list[QuestionCommon]]] = {}
    for task in TASKS:
        task_dir = out / QUESTIONS_DIR / task.value
        if task.value not in summary["produced"]:
            if task_dir.exists() and any(task_dir.glob("*.parquet")):
                problems.append(f"load: {task_dir} has question files the summary does not list")
            continue
        rows[task.value] = {}
        for split in SPLITS:
            path = split_path(out, task.value, split)
            if path.is_file():
                rows[task.value][split], unknown = _question_rows(task, _table(path))
                if unknown:
                    problems.append(f"load: {path} has columns the {task.value} table does not declare: "
                                    f"{', '.join(unknown)} (left out of the checks)")
            elif summary["produced"][task.value].get(split, 0):
                problems.append(f"load: {path} does not exist")
            else:
                rows[task.value][split] = []  # an empty split has no file
    model_ids = sorted({str(r.model_id) for splits in rows.values() for rs in splits.values() for r in rs})
    manifest = {str(r.path): str(r.sha256)
                for r in rows_from_table(ManifestRow, _table(out / QUESTIONS_DIR / MANIFEST_NAME))}
    drawings = {str(r.model_id): r for r in rows_from_table(DrawingRow, _table(
        out / DRAWINGS_FILE, columns=["model_id", "usable", "blank", "tiny", "duplicate", "scale"]))}
    models = _table(out / MODELS_FILE, columns=["model_id", "n_primitives"])
    n_primitives = {str(r.model_id): r.n_primitives for r in rows_from_table(ModelRow, models)}
    views: dict[str, dict[str, dict]] = {}
    for r in _rows(out / VIEWS_FILE, columns=VECTOR_COLUMNS, filters=[("model_id", "in", model_ids)]
                   if model_ids else None):
        views.setdefault(r["model_id"], {})[r["view"]] = r
    cut_views = {r["svg"]: r for r in _rows(out / QUESTIONS_DIR / CUT_VIEWS_NAME)}
    ds = LoadedDataset(out, summary, rows, manifest, drawings, n_primitives, views, cut_views)
    ds.aliases = {str(r.path): str(r.source)
                  for r in rows_from_table(FileSourceRow, _table(out / QUESTIONS_DIR / FILE_SOURCES_NAME))}
    ds.by_svg = {**{v["svg"]: v for mv in views.values() for v in mv.values()}, **cut_views}
    return ds, problems


def validate(out: str | Path) -> list[str]:
    """Every rule violation found in the dataset at ``out`` (empty: the dataset is valid)."""
    try:
        ds, problems = load(Path(out))
    except (OSError, ValueError, KeyError) as exc:
        return [f"load: cannot read the dataset at {out}: {type(exc).__name__}: {exc}"]
    if ds is None:
        return problems
    for check in CHECKS:
        try:
            problems += check(ds)
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"{check.__name__}: malformed dataset ({type(exc).__name__}: {exc})")
    return problems
