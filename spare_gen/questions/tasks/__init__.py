"""The SPARE3D task registry: one module (or folder) per task, named after its ``TaskName`` value, each defining
``SPEC``; and each task's full question table (the common columns and the task's own).

Adding a task: a ``TaskName`` member and a module ``<value>.py`` (or folder ``<value>/``) here with its
``TaskSpec``; nothing else.
"""

from __future__ import annotations

from importlib import import_module

import pyarrow as pa

from spare_gen.config.schema import TaskName
from spare_gen.questions.layout import SPLITS, task_name
from spare_gen.questions.schema import COMMON_FIELDS
from spare_gen.questions.spec import TaskSpec


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
LAYOUTS = TASK_SPECS  # name kept for the card and evaluate: a spec has the layout's n_answers and summary

TASK_FIELDS: dict[TaskName, list[pa.Field]] = {t: list(spec.fields) for t, spec in TASK_SPECS.items()}


def question_schema(task: TaskName) -> pa.Schema:
    return pa.schema(COMMON_FIELDS + TASK_FIELDS[TaskName(task)])


# Per task: the columns holding file paths (single paths or lists of paths).
def path_columns(task: TaskName) -> list[str]:
    return [f.name for f in question_schema(task) if f.name.endswith(("_svg", "_png", "_step"))]


def describe(task: TaskName) -> list[tuple[str, str, str]]:
    """(name, type, description) of every column, for the dataset card."""
    return [(f.name, str(f.type), (f.metadata or {}).get(b"description", b"").decode()) for f in question_schema(task)]


__all__ = ["LAYOUTS", "SPLITS", "TASKS", "TASK_SPECS", "describe", "path_columns", "question_schema", "task_name"]
