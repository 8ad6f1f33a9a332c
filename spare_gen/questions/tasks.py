"""The five SPARE3D tasks: names, answer layouts, the views they use, and the named rejection rules."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from spare_gen.config.schema import TaskName
from spare_gen.drawings.poses import ISOMETRIC_VIEWS, THREE_VIEWS

SPLITS = ("train", "val", "test")
N_CANDIDATES = 4
TARGET_POSE = 2  # the paper's conventional isometric pose (three-view-to-isometric, isometric view generation)
POSE_CHOICES = (1, 2, 5, 6)  # isometric-to-pose: answer k means pose POSE_CHOICES[k]
ALL_POSES = tuple(int(v) for v in ISOMETRIC_VIEWS)  # 1..8
FRONT, RIGHT, TOP = THREE_VIEWS  # "f", "r", "t"


def pose_view(pose: int) -> str:
    """The drawing-stage view name of isometric pose ``pose`` (1..8)."""
    if pose not in ALL_POSES:
        raise ValueError(f"unknown isometric pose {pose!r}; choose from 1..8")
    return str(pose)


@dataclass(frozen=True)
class TaskLayout:
    """How a task's answer is laid out: ``n_answers`` choices (0 for the generation tasks)."""

    name: TaskName
    n_answers: int
    summary: str


LAYOUTS: dict[TaskName, TaskLayout] = {
    TaskName.THREE_VIEW_TO_ISOMETRIC: TaskLayout(
        TaskName.THREE_VIEW_TO_ISOMETRIC, N_CANDIDATES,
        "Given the F, R, T drawings, choose the matching pose-2 isometric drawing among 4. All four candidates "
        "are drawings of cut objects (the model minus one random sphere, box, cone or torus); one cut object "
        "also provides F, R, T.",
    ),
    TaskName.ISOMETRIC_TO_POSE: TaskLayout(
        TaskName.ISOMETRIC_TO_POSE, len(POSE_CHOICES),
        "Given the F, R, T drawings and one isometric drawing, choose its pose among 1, 2, 5, 6 "
        "(answer 0..3 in that order).",
    ),
    TaskName.POSE_TO_ISOMETRIC: TaskLayout(
        TaskName.POSE_TO_ISOMETRIC, N_CANDIDATES,
        "Given the F, R, T drawings and an isometric pose 1..8, choose the drawing from that pose among 4 "
        "drawings of the same model from 4 different poses.",
    ),
    TaskName.ISOMETRIC_VIEW_GENERATION: TaskLayout(
        TaskName.ISOMETRIC_VIEW_GENERATION, 0,
        "Given the F, R, T drawings, generate the pose-2 isometric drawing (the target).",
    ),
    TaskName.POINT_CLOUD_GENERATION: TaskLayout(
        TaskName.POINT_CLOUD_GENERATION, 0,
        "Given the F, R, T drawings, generate the model as a point cloud (target: points sampled uniformly "
        "by area on the model's surface, model coordinates).",
    ),
}

TASKS: tuple[TaskName, ...] = tuple(TaskName)


def task_name(value: str | TaskName) -> TaskName:
    try:
        return TaskName(value)
    except ValueError:
        raise ValueError(f"unknown task {value!r}; choose from {', '.join(t.value for t in TaskName)}") from None


class Rejection(str, Enum):
    """Named rules that reject a model or a candidate (counted CLEVR-style for the dataset card)."""

    # model-level filters from the drawing stage (rule 4)
    NOT_DRAWN = "not_drawn"  # model or drawing stage failed
    BLANK = "blank"
    TINY = "tiny"
    DUPLICATE_MODEL = "duplicate_model"
    # near-duplicate candidates (rule 3)
    POSES_COINCIDE = "poses_coincide"  # isometric_to_pose: two of the poses 1, 2, 5, 6 give the same drawing
    NO_DISTINCT_POSES = "no_distinct_poses"  # pose_to_isometric: no query pose with 3 distinct other poses
    # cut objects (three_view_to_isometric), counted per attempt
    CUT_FAILED = "cut_failed"  # the boolean raised or failed
    CUT_MISSED = "cut_missed"  # removed less than the minimum share of the volume
    CUT_EMPTY = "cut_empty"  # removed (almost) everything
    CUT_INVALID = "cut_invalid"  # invalid B-rep
    CUT_DRAW_FAILED = "cut_draw_failed"  # the drawing stage failed or gave a blank/tiny drawing
    CUT_DUPLICATE = "cut_duplicate"  # pose-2 drawing the same as another cut's
    CUT_AMBIGUOUS = "cut_ambiguous"  # F, R and T drawings all the same as the source cut's
    CUT_ATTEMPTS_EXHAUSTED = "cut_attempts_exhausted"  # model-level: a cut slot found no good cutter
    NO_VOLUME = "no_volume"  # model-level: a shell or wire model has no volume to cut
    # point clouds and unit failures
    NO_SURFACE = "no_surface"  # tessellation gave no triangles
    UNIT_FAILED = "unit_failed"  # exception, timeout or crash of the per-model unit


# Rejections counted per candidate attempt (not per model); the rest reject the whole model.
ATTEMPT_RULES = frozenset({
    Rejection.CUT_FAILED, Rejection.CUT_MISSED, Rejection.CUT_EMPTY, Rejection.CUT_INVALID,
    Rejection.CUT_DRAW_FAILED, Rejection.CUT_DUPLICATE, Rejection.CUT_AMBIGUOUS,
})
