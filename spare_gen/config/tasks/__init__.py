"""The tasks' names and each task's own ``questions.*`` options, declared by the task, composed here.

A task with options has a module ``<task>.py`` here defining ``Options`` (a ``TaskOptions`` section: its fields,
enums and the tables those select in, e.g. isometric_to_pose's pose sets); the rest of the task (its rules, columns,
units) is ``spare_gen.stages.questions.tasks.<task>``, which reads its options from the section. The sections live in
the config package because the config, the lowest layer every module reads, validates them before any work starts;
nothing here imports upward.

Adding a task: its ``TaskName`` member below (the one registration line); with options, also its module here and
its ``Options`` among ``TaskOptionsOfEveryTask``'s bases (``TASK_OPTIONS`` finds the module by the task's name).
"""

from __future__ import annotations

from enum import Enum
from importlib import import_module
from importlib.util import find_spec

from spare_gen.config.base import TaskOptions
from spare_gen.config.tasks import isometric_to_pose, point_cloud_generation, three_view_to_isometric


class TaskName(str, Enum):
    THREE_VIEW_TO_ISOMETRIC = "three_view_to_isometric"
    ISOMETRIC_TO_POSE = "isometric_to_pose"
    POSE_TO_ISOMETRIC = "pose_to_isometric"
    ISOMETRIC_VIEW_GENERATION = "isometric_view_generation"
    POINT_CLOUD_GENERATION = "point_cloud_generation"


class TaskOptionsOfEveryTask(three_view_to_isometric.Options, point_cloud_generation.Options,
                             isometric_to_pose.Options):
    """Every task's options side by side, as the ``[questions]`` table holds them (``QuestionsConfig``'s bases)."""


def _options(task: TaskName) -> type[TaskOptions]:
    name = f"{__name__}.{task.value}"
    return import_module(name).Options if find_spec(name) is not None else TaskOptions


TASK_OPTIONS: dict[TaskName, type[TaskOptions]] = {task: _options(task) for task in TaskName}


def task_options(task: TaskName, questions: TaskOptions) -> TaskOptions:
    """``task``'s own section, read from the ``[questions]`` settings (a ``QuestionsConfig``)."""
    section = TASK_OPTIONS[TaskName(task)]
    return section.model_validate({name: getattr(questions, name) for name in section.model_fields})


__all__ = ["TASK_OPTIONS", "TaskName", "TaskOptions", "TaskOptionsOfEveryTask", "task_options"]
