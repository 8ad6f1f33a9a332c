"""Model stage, worker side: run one model in the isolated child and turn the outcome into a row."""

from __future__ import annotations

from dataclasses import replace

from spare_gen.config.schema import ModelSource
from spare_gen.stages.models.quality import assess
from spare_gen.stages.models.schema import ModelRow
from spare_gen.stages.models.settings import ModelResult, ModelSettings, ModelUnit
from spare_gen.runner.contract import run_in_child
from spare_gen.runner.isolation import Status
from spare_gen.runner.results import Timings

CSG_TARGET = "spare_gen.stages.models.child:make_csg_model"
FILE_TARGET = "spare_gen.stages.models.child:load_file_model"
HOUSE_TARGET = "spare_gen.stages.models.child:make_house_model"
NOT_RUN = Timings(child_wall_s=0.0)  # a unit whose row is known without its child
TARGETS = {ModelSource.CSG.value: CSG_TARGET, "file": FILE_TARGET, ModelSource.HOUSES.value: HOUSE_TARGET}


def model_task(unit: ModelUnit, settings: ModelSettings) -> ModelResult:
    """``unit``: {unit_id, model_id, source, ...}; returns its models.parquet row (a ``ModelRow``) and timings."""
    base = ModelRow(model_id=unit["model_id"], source=unit["source"], source_path=unit.get("source_path", ""),
                    sha256=unit.get("sha256", ""), n_primitives=unit.get("n_primitives"))
    if unit.get("skip_reason"):
        return ModelResult(row=replace(base, status=Status.SKIPPED, error=unit["skip_reason"]), timings=NOT_RUN)
    if unit.get("error"):  # found while listing the folder (spare_gen.stages.models.files): nothing to read
        return ModelResult(row=replace(base, status=Status.FAILED, error=unit["error"]), timings=NOT_RUN)
    outcome = run_in_child(TARGETS[unit["source"]], unit, settings)
    if outcome.status is Status.TRANSIENT:
        return ModelResult.failure(unit["unit_id"], Status.TRANSIENT, outcome.error)
    timings = Timings(child_wall_s=round(outcome.seconds, 4), child_cpu_s=round(outcome.cpu_seconds, 4))
    if outcome.status is not Status.OK:
        return ModelResult(row=replace(base, status=outcome.status, error=outcome.error), timings=timings)
    value = dict(outcome.value)
    if "timing" in value:  # CPU seconds per step of a CSG model
        timings = replace(timings, steps_cpu_s=value.pop("timing"))
    row = replace(base, status=Status.OK, error=outcome.error, **value)
    if row.quality is None:  # CSG: the attempt rules already require one valid solid
        if row.valid is None or row.n_solids is None:
            raise RuntimeError(f"model {row.model_id}: the CSG child returned no valid/n_solids to assess")
        quality, reason = assess(row.valid, row.n_solids, row.n_solids)
        row = replace(row, quality=quality, quality_reason=reason)
    if row.source != "file":  # a generated model's content hash is that of the STEP file it was written to
        row = replace(row, sha256=row.step_sha256)
    return ModelResult(row=row, timings=timings)


def model_rows(result: ModelResult) -> list[dict]:
    """The models.parquet rows of one unit's result: its row."""
    return [result.row.as_dict()]
