"""point_cloud_generation: given F, R, T, generate the model as a point cloud sampled on its surface.

The task's spec and worker side; the sampling runs in the isolated child (``child.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from spare_gen.config.schema import TaskName
import numpy as np

from spare_gen.stages.questions.dataset import LoadedDataset, check_model_three_views, question_id
from spare_gen.stages.questions.row_parts import Accepted, three_view_fields
from spare_gen.stages.questions.schema import POINTS_COLUMN, QuestionCommon
from spare_gen.stages.questions.settings import QuestionResult, QuestionSettings, QuestionUnit
from spare_gen.stages.questions.sheet_cells import Cell, points_cell
from spare_gen.stages.questions.spec import LoaderKeys, Spare3dLayout, TargetKind, TaskSpec, UnitInput
from spare_gen.stages.questions.worker import run_in_child
from spare_gen.rows import column

TASK = TaskName.POINT_CLOUD_GENERATION


def run_unit(unit: QuestionUnit, settings: QuestionSettings) -> QuestionResult:
    return run_in_child(f"{__name__}.child:points_unit", unit, settings)


def build_row(seed: int, item: Accepted, answer, **_) -> dict:
    points = item.result.own["points"]
    return {**three_view_fields(item.views), "points": points, "n_points": len(points),
            "deflection": item.result.own["deflection"]}


def check_row(ds: LoadedDataset, row: PointCloudGenerationRow) -> list[str]:
    return check_model_three_views(ds, row)  # the cloud's size is checked with the counts (rule 7)


def check_counts_row(ds: LoadedDataset, row: PointCloudGenerationRow) -> list[str]:
    """Rule 7's part for this task: the cloud has ``point_cloud_points`` finite points."""
    n = int(ds.summary["point_cloud_points"])
    pts = np.asarray(row.points, dtype=float)
    if pts.shape != (n, 3) or row.n_points != n or not np.isfinite(pts).all():
        return [f"counts: {question_id(row)} point cloud has shape {pts.shape} (n_points {row.n_points}), "
                f"expected ({n}, 3)"]
    return []


def sheet_cells(out: Path, row: PointCloudGenerationRow) -> list[Cell]:
    return [points_cell(f"target ({row.n_points} points)", row.points, correct=True)]


@dataclass(frozen=True, kw_only=True)
class PointCloudGenerationRow(QuestionCommon):
    """One question of point_cloud_generation: the common columns, then the target point cloud."""

    points: list | None = column(pa.list_(pa.list_(pa.float32(), 3)),
                                 "target point cloud, model coordinates, float32 (n, 3)")
    n_points: int | None = column(pa.int32(), "number of points")
    deflection: float | None = column(pa.float64(), "tessellation tolerance (model units) of the sampled surface")


SPEC = TaskSpec(
    name=TASK,
    n_answers=0,
    summary="Given the F, R, T drawings, generate the model as a point cloud (target: points sampled uniformly "
            "by area on the model's surface, model coordinates).",
    row=PointCloudGenerationRow,
    build_row=build_row,
    check_row=check_row,
    sheet_cells=sheet_cells,
    loader=LoaderKeys(target=TargetKind.POINTS, target_column=POINTS_COLUMN),
    run_unit=run_unit,
    unit_inputs=UnitInput.SHAPE_AND_FRAMING,
    spare3d=Spare3dLayout("Point_cloud_generation", "Point Cloud Generation"),
    hf_categories=("image-to-3d",),
    check_counts_row=check_counts_row,
)
