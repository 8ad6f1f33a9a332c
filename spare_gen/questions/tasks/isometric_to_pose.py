"""isometric_to_pose: given F, R, T and one isometric drawing, choose its pose among 1, 2, 3, 4.

The choices are the four upper poses, not SPARE3D's 1, 2, 5, 6 (see ``layout.POSE_CHOICES``): seen from below,
with +Z kept as image up, an axis-aligned model's drawing is recognisably upside down, a question-blind cue.

Rule 3 for this task: a model is used only when its drawings from poses 1, 2, 3 and 4 are pairwise distinct
(a pure function of the model's isometric polylines; the result travels as JSON).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from spare_gen.config.schema import TaskName
from spare_gen.questions.dataset import (
    LoadedDataset, check_model_three_views, distinct_candidates, model_view, question_id,
)
from spare_gen.questions.layout import POSE_CHOICES, AnswerSide, pose_view
from spare_gen.questions.near_duplicate import duplicate_matrix, pose_drawings
from spare_gen.questions.rejections import QuestionRejection
from spare_gen.questions.row_parts import Accepted, three_view_fields
from spare_gen.questions.schema import ANSWER_FIELD, ISO_PREFIX, field
from spare_gen.questions.settings import QuestionSettings
from spare_gen.questions.sheet_cells import Cell, drawing_image
from spare_gen.questions.spec import LoaderKeys, TaskSpec, UnitInput

TASK = TaskName.ISOMETRIC_TO_POSE


def check_isometric_to_pose(views: dict[str, dict], tolerance_px: float) -> dict:
    """Accept when the drawings from the choice poses (1, 2, 3, 4) are pairwise distinct."""
    dup = duplicate_matrix(pose_drawings(views, POSE_CHOICES), tolerance_px)
    pairs = [[POSE_CHOICES[i], POSE_CHOICES[j]] for i, j in zip(*np.nonzero(np.triu(dup)))]
    return {"accepted": not pairs, "rule": QuestionRejection.POSES_COINCIDE.value if pairs else None,
            "coinciding": pairs}


def run_unit(unit: dict, settings: QuestionSettings) -> dict:
    start = time.monotonic()
    result = check_isometric_to_pose(unit["views"], settings.tolerance_px)
    return {"model_id": unit["model_id"], **result, "seconds": round(time.monotonic() - start, 4)}


def build_row(seed: int, item: Accepted, answer: int, **_) -> dict:
    iso = item.views[pose_view(POSE_CHOICES[answer])]
    return {**three_view_fields(item.views), "iso_svg": iso["svg"], "iso_png": iso["png"],
            "choice_poses": list(POSE_CHOICES), "answer": answer}


def check_row(ds: LoadedDataset, row: dict) -> list[str]:
    mid = row["model_id"]
    views = [pose_view(p) for p in POSE_CHOICES]
    svgs = [model_view(ds, mid, v, "svg") for v in views]
    bad = distinct_candidates(ds, row, svgs, [model_view(ds, mid, v, "png") for v in views],
                              float(ds.summary["tolerance_px"]))
    if row.get("answer") in range(len(POSE_CHOICES)) and ds.source(row["iso_svg"]) != svgs[row["answer"]]:
        bad.append(f"candidates: {question_id(row)}: iso drawing is not the model's pose "
                   f"{POSE_CHOICES[row['answer']]} drawing the answer claims")
    return bad + check_model_three_views(ds, row)


def sheet_cells(out: Path, row: dict) -> list[Cell]:
    return [Cell("input", drawing_image(out, row["iso_png"])),
            *(Cell(f"choice {i}", text=f"pose {p}", correct=i == row["answer"])
              for i, p in enumerate(row["choice_poses"]))]


SPEC = TaskSpec(
    name=TASK,
    n_answers=len(POSE_CHOICES),
    summary="Given the F, R, T drawings and one isometric drawing, choose its pose among 1, 2, 3, 4 "
            "(answer 0..3 in that order).",
    fields=(
        field("iso_svg", pa.string(), "input isometric drawing, SVG"),
        field("iso_png", pa.string(), "input isometric drawing, PNG"),
        field("choice_poses", pa.list_(pa.int32()), "the pose choices, always [1, 2, 3, 4]; the iso drawing's pose is "
              "choice_poses[answer] (its file is a content-named copy, see questions/file_sources.parquet)"),
        ANSWER_FIELD,
    ),
    build_row=build_row,
    check_row=check_row,
    sheet_cells=sheet_cells,
    loader=LoaderKeys(drawing={"iso": ISO_PREFIX}),
    run_unit=run_unit,
    unit_inputs=UnitInput.ISOMETRIC_POLYLINES,
    answer_side=AnswerSide.CLASSES,
    answer_side_prefix=ISO_PREFIX,
    content_named_columns=(f"{ISO_PREFIX}_svg", f"{ISO_PREFIX}_png"),
)
