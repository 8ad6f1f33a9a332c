"""isometric_to_pose: given F, R, T and one isometric drawing, choose its pose among the choice poses.

``questions.pose_choices`` picks them (``POSE_CHOICE_SETS``, the task's variants, declared with its options in
``spare_gen.config.tasks.isometric_to_pose``): by default the four upper poses
1, 2, 3, 4; ``spare3d``: SPARE3D's 1, 2, 5, 6, where, seen from below with +Z kept as image up, an axis-aligned
model's drawing is recognisably upside down, a question-blind cue. The spec a run uses (``variant``) has as many
answers as its set has poses. Adding a set: a ``PoseChoices`` member and its row there.

``questions.symmetry_filter = "spare3d"`` also leaves out, before any unit runs, the quarter of usable models whose
F, R, T drawings look most alike by the original generator's ``I2P_filter.py`` (``get_sym``; the SPARE3D README: 25 %
of isometric-to-pose questions removed for symmetric models). Its score is the fewest differing RGB values among
F - R, F - T, R turned a quarter counter-clockwise - T, and F - F turned a half; the original multiplied it by
``1 + 1.5 i / n`` for the i-th model folder in name order, a bias towards keeping late names that is left out here
(ties go by the seeded model order instead).

Its questions read the F, R, T drawings and those of the poses of every set (``SPEC.views``: 1-6, not 7 or 8), under
either setting, so a rerun with the other set reuses the drawings.

Rule 3 for this task: a model is used only when its drawings from the choice poses are pairwise distinct (a pure
function of the model's isometric polylines; the result travels as JSON and names the poses it checked, which the
row then records as ``choice_poses``).
"""

from __future__ import annotations

import dataclasses
import io
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from PIL import Image

from spare_gen.config.schema import Config, TaskName
from spare_gen.config.tasks.isometric_to_pose import POSE_CHOICE_SETS, Options, PoseChoices, SymmetryFilter
from spare_gen.store.packed import drawing_bytes
from spare_gen.stages.questions.dataset import (
    LoadedDataset, check_model_three_views, distinct_candidates, model_view, question_id,
)
from spare_gen.stages.questions.layout import FRONT, RIGHT, TOP, AnswerSide, model_views, pose_view
from spare_gen.stages.questions.near_duplicate import duplicate_matrix, pose_drawings
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.row_parts import Accepted, three_view_fields
from spare_gen.stages.questions.schema import ISO_PREFIX, QuestionCommon, answer_choice
from spare_gen.stages.questions.settings import QuestionResult, QuestionSettings, QuestionUnit
from spare_gen.runner.results import Timings
from spare_gen.stages.questions.sheet_cells import Cell, drawing_cell, pose_cube_cell
from spare_gen.stages.questions.spec import LoaderKeys, PaperRecipes, Spare3dLayout, TaskSpec, UnitInput
from spare_gen.rng import derive_seed
from spare_gen.rows import column

TASK = TaskName.ISOMETRIC_TO_POSE
SPARE3D_SYMMETRIC_SHARE = 0.25  # the share of usable models questions.symmetry_filter = "spare3d" leaves out


def check_isometric_to_pose(views: dict[str, dict], tolerance_px: float, poses: tuple[int, ...]) -> dict:
    """Accept when the drawings from the choice poses ``poses`` are pairwise distinct."""
    dup = duplicate_matrix(pose_drawings(views, poses), tolerance_px)
    pairs = [[poses[i], poses[j]] for i, j in zip(*np.nonzero(np.triu(dup)))]
    return {"accepted": not pairs, "rule": QuestionRejection.POSES_COINCIDE.value if pairs else None,
            "coinciding": pairs, "choice_poses": list(poses)}


def run_unit(unit: QuestionUnit, settings: QuestionSettings) -> QuestionResult:
    start = time.monotonic()
    result = check_isometric_to_pose(unit["views"], settings.tolerance_px, settings.own(Options).choice_poses)
    return QuestionResult.stated(unit["model_id"], result, Timings(child_wall_s=round(time.monotonic() - start, 4)))


def three_view_difference(front: np.ndarray, right: np.ndarray, top: np.ndarray) -> int:
    """The original I2P_filter.py's symmetry score of (H, W, 3) uint8 F, R, T images: the fewest differing values
    among F - R, F - T, R turned a quarter counter-clockwise - T, and F - F turned a half. Low = symmetric."""
    return min(int(np.count_nonzero(front != right)), int(np.count_nonzero(front != top)),
               int(np.count_nonzero(np.rot90(right) != top)), int(np.count_nonzero(front != front[::-1, ::-1])))


def _rgb(out: Path, rel: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(drawing_bytes(out, rel))).convert("RGB"))


def most_symmetric(scores: dict[str, int], share: float, seed: int) -> list[str]:
    """The ``share`` of models (rounded) with the lowest scores, ties in the seeded model order."""
    order = sorted(scores, key=lambda m: (scores[m], derive_seed(seed, "questions", TASK.value, "symmetry", m), m))
    return order[:round(share * len(order))]


def symmetric_models(config: Config, out: Path, views: dict[str, dict[str, dict]]) -> dict[str, QuestionRejection]:
    """``TaskSpec.model_filter``: with ``questions.symmetry_filter = "spare3d"`` the most symmetric quarter of the
    usable models by their F, R, T PNGs (module docstring); else none."""
    if config.questions.symmetry_filter is not SymmetryFilter.SPARE3D:
        return {}
    scores = {mid: three_view_difference(*(_rgb(out, v[name]["png"]) for name in (FRONT, RIGHT, TOP)))
              for mid, v in views.items()}
    return dict.fromkeys(most_symmetric(scores, SPARE3D_SYMMETRIC_SHARE, config.seed),
                         QuestionRejection.SYMMETRIC_THREE_VIEWS)


def build_row(seed: int, item: Accepted, answer: int, **_) -> dict:
    """The poses are the ones the model's unit checked (its result, read whole on the split's writer)."""
    poses = [int(p) for p in item.result.own["choice_poses"]]
    iso = item.views[pose_view(poses[answer])]
    return {**three_view_fields(item.views), "iso_svg": iso["svg"], "iso_png": iso["png"],
            "choice_poses": poses, "answer": answer}


def _choice_poses(ds: LoadedDataset, row: IsometricToPoseRow) -> tuple[tuple[int, ...], list[str]]:
    """The row's recorded choice poses, and a line if they are not the set ``questions.pose_choices`` names."""
    poses = tuple(int(p) for p in row.choice_poses or ())
    recorded = ds.summary.get("pose_choices")  # absent in datasets made before the setting existed
    expected = POSE_CHOICE_SETS[PoseChoices(recorded)] if recorded in {c.value for c in PoseChoices} else None
    if poses in POSE_CHOICE_SETS.values() and expected in (None, poses):
        return poses, []
    want = f"{list(expected)} (questions.pose_choices = {recorded})" if expected else \
        " or ".join(str(list(p)) for p in POSE_CHOICE_SETS.values())
    return poses, [f"candidates: {question_id(row)}: choice_poses {list(poses)} are not {want}"]


def check_row(ds: LoadedDataset, row: IsometricToPoseRow) -> list[str]:
    mid = str(row.model_id)
    poses, bad = _choice_poses(ds, row)
    if bad:
        return bad + check_model_three_views(ds, row)
    views = [pose_view(p) for p in poses]
    svgs = [model_view(ds, mid, v, "svg") for v in views]
    bad = distinct_candidates(ds, row, svgs, [model_view(ds, mid, v, "png") for v in views],
                              float(ds.summary["tolerance_px"]))
    a = row.answer
    if a is not None and a in range(len(poses)) and ds.source(row.iso_svg) != svgs[a]:
        bad.append(f"candidates: {question_id(row)}: iso drawing is not the model's pose "
                   f"{poses[a]} drawing the answer claims")
    return bad + check_model_three_views(ds, row)


def sheet_cells(out: Path, row: IsometricToPoseRow) -> list[Cell]:
    return [drawing_cell(out, "input", row.iso_png, row.iso_svg),
            *(pose_cube_cell(f"choice {i}: pose {p}", (p,), correct=i == row.answer)
              for i, p in enumerate(row.choice_poses or []))]


def variant(options: Options) -> TaskSpec:
    """The spec for ``questions.pose_choices``: one answer per pose of the set."""
    return dataclasses.replace(SPEC, n_answers=len(options.choice_poses))


def card_options(options: Options) -> str:
    return (f"isometric-to-pose choices `{options.pose_choices.value}` (`questions.pose_choices`: poses "
            f"{', '.join(map(str, options.choice_poses))})")


@dataclasses.dataclass(frozen=True, kw_only=True)
class IsometricToPoseRow(QuestionCommon):
    """One question of isometric_to_pose: the common columns, then the isometric drawing and the pose choices."""

    iso_svg: str | None = column(pa.string(), "input isometric drawing, SVG")
    iso_png: str | None = column(pa.string(), "input isometric drawing, PNG")
    choice_poses: list[int] | None = column(
        pa.list_(pa.int32()), "the pose choices, the same in every row: [1, 2, 3, 4] "
        "(questions.pose_choices = upper, the default) or [1, 2, 5, 6] (spare3d); the iso drawing's pose is "
        "choice_poses[answer] (its file is a content-named copy, see questions/file_sources.parquet)")
    answer: int | None = answer_choice()


SPEC = TaskSpec(
    name=TASK,
    n_answers=len(Options().choice_poses),
    summary="Given the F, R, T drawings and one isometric drawing, choose its pose among four choice poses "
            "(answer 0..3 in the order of `choice_poses`: 1, 2, 3, 4, or SPARE3D's 1, 2, 5, 6).",
    row=IsometricToPoseRow,
    build_row=build_row,
    check_row=check_row,
    sheet_cells=sheet_cells,
    loader=LoaderKeys(drawing={"iso": ISO_PREFIX}),
    run_unit=run_unit,
    unit_inputs=UnitInput.ISOMETRIC_POLYLINES,
    answer_side=AnswerSide.CLASSES,
    answer_side_prefix=ISO_PREFIX,
    content_named_columns=(f"{ISO_PREFIX}_svg", f"{ISO_PREFIX}_png"),
    choice_column="choice_poses",
    spare3d=Spare3dLayout("Isometric_to_pose", "Isometric to Pose", answer_text=True, drawing_file="answer.png"),
    hf_categories=("multiple-choice", "image-classification"),
    human_reference=(0.602, 0.910),
    instructions="You see the front (F), right (R) and top (T) view line drawings of an object and one isometric "
                 "drawing of it. Determine the camera pose of that isometric drawing: from which corner of the pose "
                 "cube was it seen? Choose among the poses offered.",
    variant=variant,
    card_options=card_options,
    figure6=(PaperRecipes("multiclass", "supplementary C.2, multi-class classification", {
        "resnet50": (2e-5, 70, 50, 80.4), "vgg16": (2e-5, 80, 50, 87.5), "bagnet33": (2e-5, 30, 50, 71.9)}),),
    model_filter=symmetric_models,
    views=model_views(sorted({p for poses in POSE_CHOICE_SETS.values() for p in poses})),
)
