"""Pool stage, worker side: extract a ground truth in the killable OCCT child; make a model's corruptions in the worker."""

from __future__ import annotations

from spare_gen.stages.pool.schema import WireframeRow
from spare_gen.stages.pool.settings import (
    CorruptionSettings, CorruptionsResult, CorruptionUnit, WireframeResult, WireframeSettings, WireframeUnit,
)
from spare_gen.stages.pool.corruptions import model_corruption_rows
from spare_gen.runner.contract import run_in_child
from spare_gen.runner.isolation import Status
from spare_gen.runner.results import Timings

EXTRACT_TARGET = "spare_gen.stages.pool.child:extract_unit"


def wireframe_task(unit: WireframeUnit, settings: WireframeSettings) -> WireframeResult:
    """Worker side: extract one ground truth in the killable OCCT child and make its row."""
    outcome = run_in_child(EXTRACT_TARGET, unit, settings)
    if outcome.status is Status.TRANSIENT:
        return WireframeResult.failure(unit["unit_id"], Status.TRANSIENT, outcome.error)
    if outcome.status is Status.OK:
        row = outcome.value  # the child's WireframeRow
    else:
        row = WireframeRow(model_id=unit["model_id"], status=outcome.status, error=outcome.error)
    return WireframeResult(row=row, timings=Timings(child_wall_s=round(outcome.seconds, 4),
                                                    child_cpu_s=round(outcome.cpu_seconds, 4)))


def corruption_task(unit: CorruptionUnit, settings: CorruptionSettings) -> CorruptionsResult:
    """Worker side (pure Python, no child process): every corruption of one ground truth.

    Each corruption draws from its own generator derived from (seed, "corruption", model, kind, severity)
    (``spare_gen.stages.pool.corruptions``), so adding a kind or severity leaves the others unchanged.
    """
    rows = model_corruption_rows(
        unit["gt"], settings.seed, corner_threshold=settings.corner_threshold,
        edge_threshold=settings.edge_threshold, image_size=settings.image_size, out_dir=settings.out_dir,
        predictions=unit["predictions"], prediction_units=settings.prediction_units,
    )
    return CorruptionsResult(model_id=unit["model_id"], rows=rows)
