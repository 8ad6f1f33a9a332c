"""The SPARE3D task registry: one module per task, named after its ``TaskName`` value, each defining ``SPEC``.

Adding a task: a ``TaskName`` member and a module ``<value>.py`` here with its ``TaskSpec``; nothing else.
"""

from __future__ import annotations

from importlib import import_module

from spare_gen.config.schema import TaskName
from spare_gen.questions.layout import SPLITS, task_name
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

__all__ = ["LAYOUTS", "SPLITS", "TASKS", "TASK_SPECS", "task_name"]
