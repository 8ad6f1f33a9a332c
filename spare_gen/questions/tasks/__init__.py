"""The SPARE3D task registry: one module per task, each defining its ``SPEC`` (``spare_gen.questions.spec``).

Adding a task: a ``TaskName`` member and a module here whose SPEC is listed below.
"""

from __future__ import annotations

from spare_gen.config.schema import TaskName
from spare_gen.questions.layout import SPLITS
from spare_gen.questions.spec import TaskSpec
from spare_gen.questions.tasks import (
    isometric_to_pose, isometric_view_generation, point_cloud_generation, pose_to_isometric, three_view_to_isometric,
)

TASK_SPECS: dict[TaskName, TaskSpec] = {m.SPEC.name: m.SPEC for m in (
    three_view_to_isometric, isometric_to_pose, pose_to_isometric, isometric_view_generation, point_cloud_generation,
)}
TASKS: tuple[TaskName, ...] = tuple(TaskName)
LAYOUTS = TASK_SPECS  # name kept for the card and evaluate: a spec has the layout's n_answers and summary
if set(TASK_SPECS) != set(TASKS):
    raise ImportError(f"spare_gen.questions.tasks: no task module for {sorted(set(TASKS) - set(TASK_SPECS))}")

__all__ = ["LAYOUTS", "SPLITS", "TASKS", "TASK_SPECS"]
