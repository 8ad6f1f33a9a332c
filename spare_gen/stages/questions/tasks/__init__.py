"""The SPARE3D task registry: one module (or folder) per task, named after its ``TaskName`` value, each defining
``SPEC``; and each task's full question table (its row class: the common columns and the task's own).

Adding a task: a ``TaskName`` member (``spare_gen.config.tasks``) and a module ``<value>.py`` (or folder
``<value>/``) here with its ``TaskSpec``; its own ``questions.*`` options, if any, are its section in
``spare_gen.config.tasks.<value>``. ``TASK_SPECS`` holds the specs of the default settings; a run uses
``task_spec(task, config.questions)``, its variant's.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.canvas.views import FIXED_VIEWS, THREE_VIEWS
from spare_gen.config.schema import Config, QuestionsConfig, TaskName
from spare_gen.stages.questions.layout import SPLITS, task_name
from spare_gen.rows import arrow_schema, rows_from_table
from spare_gen.stages.questions.schema import COMMON_FIELDS, PATH_SUFFIXES, QuestionCommon, split_path
from spare_gen.stages.questions.settings import QuestionSettings
from spare_gen.stages.questions.spec import TaskSpec


def _load_spec(task: TaskName) -> TaskSpec:
    try:
        spec = import_module(f"{__name__}.{task.value}").SPEC
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{task.value}":
            raise
        raise ImportError(f"task {task.value!r} has no module {__name__}.{task.value}") from exc
    if spec.name is not task:
        raise ImportError(f"{__name__}.{task.value}.SPEC is for task {spec.name.value!r}")
    return spec


TASK_SPECS: dict[TaskName, TaskSpec] = {task: _load_spec(task) for task in TaskName}
TASKS: tuple[TaskName, ...] = tuple(TaskName)


def task_spec(task: TaskName | str, questions: QuestionsConfig) -> TaskSpec:
    """The spec of ``task`` for these ``questions`` settings (its variant: answer count, choices, rules)."""
    return TASK_SPECS[TaskName(task)].resolved(questions)


def drawn_views(config: Config) -> tuple[str, ...]:
    """The fixed views the drawings stage draws for ``config``: F, R, T (its flags and framing read them) and every
    view a task the questions stage asks for reads (``TaskSpec.views``), in ``FIXED_VIEWS`` order; all 11 when
    the questions stage is off or asks for no task (the drawings are then made for their own sake)."""
    asked = [t for t in TASKS if config.questions.counts.get(t, 0) > 0] if config.questions.enabled else []
    if not asked:
        return FIXED_VIEWS
    read = {*THREE_VIEWS, *(v for t in asked for v in TASK_SPECS[t].views)}
    return tuple(v for v in FIXED_VIEWS if v in read)


def question_settings(config: Config, out: Path, task: TaskName, round_: int = 1) -> QuestionSettings:
    """The question stage's settings for ``task``: the common fields and the task's own options."""
    return QuestionSettings.from_config(config, out, TaskName(task), round_)


def dataset_choices(out: Path, task: TaskName | str) -> int:
    """How many choices the questions of ``task`` in the dataset at ``out`` offer: its first row's count (the
    variant it was made with, e.g. a five-pose set), or the default spec's when no split has a row."""
    spec = TASK_SPECS[TaskName(task)]
    for split in SPLITS if spec.choice_column else ():
        path = split_path(Path(out), TaskName(task).value, split)
        if path.is_file():
            for batch in pq.ParquetFile(path).iter_batches(batch_size=1, columns=[spec.choice_column]):
                return spec.n_choices(rows_from_table(spec.row, pa.Table.from_batches([batch]))[0])
    return spec.n_answers


def question_row(task: TaskName | str) -> type[QuestionCommon]:
    """The row class of ``task``'s question table (``QuestionCommon``'s columns, then the task's own)."""
    return TASK_SPECS[TaskName(task)].row


def question_schema(task: TaskName | str) -> pa.Schema:
    """The Parquet schema of ``task``'s question table, with each column's description."""
    return arrow_schema(question_row(task), described=True)


# Each task's own columns (its row's, after the common ones), for the column reference (docs).
TASK_FIELDS: dict[TaskName, list[pa.Field]] = {t: list(question_schema(t))[len(COMMON_FIELDS):] for t in TASKS}


# Per task: the columns holding file paths (single paths or lists of paths).
def path_columns(task: TaskName) -> list[str]:
    return [f.name for f in question_schema(task) if f.name.endswith(PATH_SUFFIXES)]


def describe(task: TaskName) -> list[tuple[str, str, str]]:
    """(name, type, description) of every column, for the dataset card."""
    return [(f.name, str(f.type), (f.metadata or {}).get(b"description", b"").decode()) for f in question_schema(task)]


__all__ = ["SPLITS", "TASKS", "TASK_SPECS", "describe", "drawn_views", "path_columns", "dataset_choices",
           "question_row", "question_schema", "question_settings", "task_name", "task_spec"]
