"""pose_to_isometric: given F, R, T and a pose 1..8, choose that pose's drawing among 4 poses of the model.

Rule 3 for this task: a model is used only when some query pose has 3 other poses whose drawings are distinct
from it and from each other (a pure function of the model's isometric polylines; the result travels as JSON).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.dataset import (
    LoadedDataset, check_model_three_views, distinct_candidates, is_model_view, question_id,
)
from spare_gen.stages.questions.layout import ALL_POSES, N_CANDIDATES, AnswerSide, pose_view
from spare_gen.stages.questions.near_duplicate import distinct_triples, duplicate_matrix, pose_drawings
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.row_parts import Accepted, arrange, three_view_fields
from spare_gen.stages.questions.schema import (
    CANDIDATE_COLUMNS, CANDIDATE_PREFIX, POSE_COLUMN, QuestionCommon, answer_choice, candidate_drawings,
)
from spare_gen.stages.questions.select import balanced_choice
from spare_gen.stages.questions.settings import QuestionResult, QuestionSettings, QuestionUnit
from spare_gen.runner.results import Timings
from spare_gen.stages.questions.sheet_cells import Cell, drawing_cell, pose_cube_cell
from spare_gen.stages.questions.spec import LoaderKeys, PaperRecipes, Spare3dLayout, TaskSpec, UnitInput
from spare_gen.rng import derive_rng
from spare_gen.rows import column

TASK = TaskName.POSE_TO_ISOMETRIC


def check_pose_to_isometric(views: dict[str, dict], tolerance_px: float) -> dict:
    """Accept when some query pose has 3 other poses whose drawings are distinct from it and each other.

    Returns the 8x8 near-duplicate matrix (poses 1..8) and the feasible query poses, from which the
    driver picks a balanced query pose and the candidate poses.
    """
    dup = duplicate_matrix(pose_drawings(views, ALL_POSES), tolerance_px)
    feasible = [p for i, p in enumerate(ALL_POSES) if distinct_triples(dup, i)]
    return {
        "accepted": bool(feasible),
        "rule": None if feasible else QuestionRejection.NO_DISTINCT_POSES.value,
        "duplicates": dup.astype(int).tolist(),
        "feasible_poses": feasible,
    }


def candidate_poses(duplicates: list[list[int]], query: int, rng: np.random.Generator) -> list[int]:
    """The query pose and 3 distractor poses (a random distinct triple), query first."""
    dup = np.asarray(duplicates, dtype=bool)
    q = ALL_POSES.index(query)
    triples = distinct_triples(dup, q)
    if not triples:
        raise ValueError(f"pose {query} has no 3 distinct other poses for this model")
    chosen = triples[int(rng.integers(len(triples)))]
    return [query] + [ALL_POSES[i] for i in chosen]


def run_unit(unit: QuestionUnit, settings: QuestionSettings) -> QuestionResult:
    start = time.monotonic()
    result = check_pose_to_isometric(unit["views"], settings.tolerance_px)
    return QuestionResult.stated(unit["model_id"], result, Timings(child_wall_s=round(time.monotonic() - start, 4)))


def split_extras(seed: int, split: str, items: list[Accepted]) -> list[dict]:
    """A query pose per question, balanced over the split among each model's feasible poses."""
    poses = balanced_choice([it.result.own["feasible_poses"] for it in items], ALL_POSES,
                            derive_rng(seed, "questions", TASK.value, split, "poses"))
    return [{"pose": p} for p in poses]


def build_row(seed: int, item: Accepted, answer: int, pose: int, **_) -> dict:
    rng = derive_rng(seed, "questions", TASK.value, item.model_id, "candidates")
    poses = candidate_poses(item.result.own["duplicates"], pose, rng)
    arranged = arrange(poses[0], poses[1:], answer, rng)
    return {
        **three_view_fields(item.views),
        "pose": pose,
        "candidate_svg": [item.views[pose_view(p)]["svg"] for p in arranged],
        "candidate_png": [item.views[pose_view(p)]["png"] for p in arranged],
        "answer": answer,
        "candidate_poses": arranged,
    }


def check_row(ds: LoadedDataset, row: PoseToIsometricRow) -> list[str]:
    svgs = row.candidates("svg")
    bad = distinct_candidates(ds, row, list(svgs), list(row.candidates("png")), float(ds.summary["tolerance_px"]))
    a, mid = row.answer, str(row.model_id)
    if a is not None and 0 <= a < len(svgs):
        if not is_model_view(ds, svgs[a], mid, pose_view(int(row.pose or 0))):
            bad.append(f"candidates: {question_id(row)}: the answer is not the model's pose-{row.pose} drawing")
        poses = list(row.candidate_poses or [])
        if len(svgs) != len(poses) or not all(is_model_view(ds, s, mid, pose_view(p)) for s, p in zip(svgs, poses)):
            bad.append(f"candidates: {question_id(row)}: candidate drawings do not match candidate_poses")
    return bad + check_model_three_views(ds, row)


def sheet_cells(out: Path, row: PoseToIsometricRow) -> list[Cell]:
    return [pose_cube_cell(f"input: pose {row.pose}", None if row.pose is None else (int(row.pose),)),
            *(drawing_cell(out, f"choice {i}", png, svg, correct=i == row.answer)
              for i, (png, svg) in enumerate(zip(row.candidates("png"), row.candidates("svg"))))]


@dataclass(frozen=True, kw_only=True)
class PoseToIsometricRow(QuestionCommon):
    """One question of pose_to_isometric: the common columns, then the query pose, the candidates and the answer."""

    pose: int | None = column(pa.int32(), "input isometric pose (1-8)")
    candidate_svg: list[str] | None = candidate_drawings("SVG")
    candidate_png: list[str] | None = candidate_drawings("PNG")
    answer: int | None = answer_choice()
    candidate_poses: list[int] | None = column(
        pa.list_(pa.int32()), "pose of each candidate drawing, in answer order; not "
        "handed out by loaders (the candidate files are content-named copies)", answer_key=True)


SPEC = TaskSpec(
    name=TASK,
    card_example=True,
    figure6=(
        PaperRecipes("binary", "supplementary C.3, binary classification", {
            "resnet50": (2e-5, 9, 50, 27.4), "vgg16": (1e-4, 30, 50, 27.8), "bagnet33": (5e-5, 8, 50, 26.5)}),
        PaperRecipes("metric", "supplementary C.3, metric learning", {
            "resnet50": (1e-5, 4, 47, 27.8), "vgg16": (5e-6, 10, 42, 27.1), "bagnet33": (1e-4, 4, 41, 26.8)}),
    ),
    n_answers=N_CANDIDATES,
    summary="Given the F, R, T drawings and an isometric pose 1..8, choose the drawing from that pose among 4 "
            "drawings of the same model from 4 different poses.",
    row=PoseToIsometricRow,
    build_row=build_row,
    check_row=check_row,
    sheet_cells=sheet_cells,
    loader=LoaderKeys(candidates=CANDIDATE_PREFIX, pose=POSE_COLUMN),
    run_unit=run_unit,
    unit_inputs=UnitInput.ISOMETRIC_POLYLINES,
    split_extras=split_extras,
    answer_side=AnswerSide.CANDIDATES,
    answer_side_prefix=CANDIDATE_PREFIX,
    content_named_columns=CANDIDATE_COLUMNS,
    choice_column=f"{CANDIDATE_PREFIX}_svg",
    spare3d=Spare3dLayout("Pose_to_isometric", "Pose to Isometric"),
    hf_categories=("multiple-choice", "visual-question-answering"),
    human_reference=(0.586, 0.650),
    instructions="You see the front (F), right (R) and top (T) view line drawings of an object and a viewing "
                 "pose, a corner of the pose cube. Choose the isometric drawing of the same object seen from that "
                 "pose among the four candidates.",
)
