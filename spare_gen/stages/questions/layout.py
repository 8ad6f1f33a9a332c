"""What the five SPARE3D tasks share: splits, candidate count, poses, the views they use, answer sides."""

from __future__ import annotations

from enum import Enum

from spare_gen.config.schema import TaskName
from spare_gen.canvas.views import FIXED_VIEWS, ISOMETRIC_VIEWS, THREE_VIEWS

SPLITS = ("train", "val", "test")
DEFAULT_SPLIT = "test"  # the split every command reads unless told (export, evaluate, show)
N_CANDIDATES = 4  # candidate drawings of the candidate tasks (three_view_to_isometric, pose_to_isometric)
TARGET_POSE = 2  # the paper's conventional isometric pose (three-view-to-isometric, isometric view generation)
ALL_POSES = tuple(int(v) for v in ISOMETRIC_VIEWS)  # 1..8
FRONT, RIGHT, TOP = THREE_VIEWS  # "f", "r", "t"


def empty_splits(produced: dict[str, dict[str, int]]) -> list[str]:
    """``task/split`` for every split a task holds no question in (``produced``: questions per task and split)."""
    return [f"{task}/{split}" for task, splits in produced.items() for split in SPLITS if not splits.get(split)]


def empty_splits_warning(empty: list[str]) -> str:
    """The one line that says which splits are empty (said by the run, repeated by the dataset card)."""
    return (f"WARNING: {len(empty)} empty split(s), no questions to train or score on: {', '.join(empty)}; raise "
            f"questions.counts (each split gets its questions.split share)")


def pose_view(pose: int) -> str:
    """The drawing-stage view name of isometric pose ``pose`` (1..8)."""
    if pose not in ALL_POSES:
        raise ValueError(f"unknown isometric pose {pose!r}; choose from 1..8")
    return str(pose)


def model_views(poses) -> tuple[str, ...]:
    """The drawing-stage views F, R, T and those of isometric ``poses``, in the drawings stage's order (a task's
    ``TaskSpec.views``)."""
    wanted = {*THREE_VIEWS, *(pose_view(int(p)) for p in poses)}
    return tuple(v for v in FIXED_VIEWS if v in wanted)


class AnswerSide(str, Enum):
    """How a multiple-choice task's answer relates to drawings: one drawing per choice, or one drawing and one class per choice."""

    CANDIDATES = "candidates"
    CLASSES = "classes"


def task_name(value: str | TaskName) -> TaskName:
    """``value`` as a TaskName; ValueError naming the allowed tasks otherwise."""
    try:
        return TaskName(value)
    except ValueError:
        raise ValueError(f"unknown task {value!r}; choose from {', '.join(t.value for t in TaskName)}") from None
