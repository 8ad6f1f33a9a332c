"""What the five SPARE3D tasks share: splits, candidate count, poses, the views they use, answer sides."""

from __future__ import annotations

from enum import Enum

from spare_gen.config.schema import PoseChoices, TaskName
from spare_gen.drawings.poses import ISOMETRIC_VIEWS, THREE_VIEWS

SPLITS = ("train", "val", "test")
DEFAULT_SPLIT = "test"  # the split every command reads unless told (export, evaluate, show)
N_CANDIDATES = 4
TARGET_POSE = 2  # the paper's conventional isometric pose (three-view-to-isometric, isometric view generation)
# isometric-to-pose (``questions.pose_choices``): answer k means pose choice_poses[k], the tuple below. Upper: the four
# upper poses, each the previous one turned a quarter about +Z, so the isometric drawing alone tells nothing of its
# pose for any model distribution that is invariant under quarter turns about Z (the CSG generator's is). SPARE3D
# offered 1, 2, 5, 6: every isometric camera keeps +Z as image up, so an axis-aligned solid seen from below (5, 6)
# looks upside down (its visible corners point down) and one drawing tells pose 1 or 2 from 5 or 6; no
# re-orientation of the models can remove that.
POSE_CHOICE_SETS: dict[PoseChoices, tuple[int, ...]] = {
    PoseChoices.UPPER: (1, 2, 3, 4),
    PoseChoices.SPARE3D: (1, 2, 5, 6),
}
ALL_POSES = tuple(int(v) for v in ISOMETRIC_VIEWS)  # 1..8
FRONT, RIGHT, TOP = THREE_VIEWS  # "f", "r", "t"


def pose_view(pose: int) -> str:
    """The drawing-stage view name of isometric pose ``pose`` (1..8)."""
    if pose not in ALL_POSES:
        raise ValueError(f"unknown isometric pose {pose!r}; choose from 1..8")
    return str(pose)


class AnswerSide(str, Enum):
    """How a multiple-choice task's answer relates to drawings: one drawing per choice, or one drawing and 4 classes."""

    CANDIDATES = "candidates"
    CLASSES = "classes"


def task_name(value: str | TaskName) -> TaskName:
    """``value`` as a TaskName; ValueError naming the allowed tasks otherwise."""
    try:
        return TaskName(value)
    except ValueError:
        raise ValueError(f"unknown task {value!r}; choose from {', '.join(t.value for t in TaskName)}") from None
