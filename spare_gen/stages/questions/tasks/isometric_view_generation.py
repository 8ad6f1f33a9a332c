"""isometric_view_generation: given F, R, T, generate the pose-2 isometric drawing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.dataset import LoadedDataset, check_model_three_views, is_model_view, question_id
from spare_gen.stages.questions.layout import TARGET_POSE, model_views, pose_view
from spare_gen.stages.questions.row_parts import Accepted, three_view_fields
from spare_gen.stages.questions.schema import TARGET_PREFIX, QuestionCommon
from spare_gen.stages.questions.sheet_cells import Cell, drawing_cell
from spare_gen.stages.questions.spec import LoaderKeys, Spare3dLayout, TargetKind, TaskSpec
from spare_gen.rows import column

TASK = TaskName.ISOMETRIC_VIEW_GENERATION


def build_row(seed: int, item: Accepted, answer, **_) -> dict:
    target = item.views[pose_view(TARGET_POSE)]
    return {**three_view_fields(item.views), "target_svg": target["svg"], "target_png": target["png"]}


def check_row(ds: LoadedDataset, row: IsometricViewGenerationRow) -> list[str]:
    bad = []
    if not is_model_view(ds, row.target_svg, str(row.model_id), pose_view(TARGET_POSE)):
        bad.append(f"candidates: {question_id(row)}: the target is not the model's pose-2 drawing")
    return bad + check_model_three_views(ds, row)


def sheet_cells(out: Path, row: IsometricViewGenerationRow) -> list[Cell]:
    return [drawing_cell(out, "target (pose 2)", row.target_png, row.target_svg, correct=True)]


@dataclass(frozen=True, kw_only=True)
class IsometricViewGenerationRow(QuestionCommon):
    """One question of isometric_view_generation: the common columns, then the target drawing."""

    target_svg: str | None = column(pa.string(), "target pose-2 isometric drawing, SVG")
    target_png: str | None = column(pa.string(), "target pose-2 isometric drawing, PNG")


SPEC = TaskSpec(
    name=TASK,
    n_answers=0,
    summary="Given the F, R, T drawings, generate the pose-2 isometric drawing (the target).",
    row=IsometricViewGenerationRow,
    build_row=build_row,
    check_row=check_row,
    sheet_cells=sheet_cells,
    loader=LoaderKeys(target=TargetKind.DRAWING, target_column=TARGET_PREFIX),
    spare3d=Spare3dLayout("Isometric_view_generation", "Isometric View Generation", target_file="isometric.png"),
    hf_categories=("image-to-image",),
    views=model_views([TARGET_POSE]),
)
