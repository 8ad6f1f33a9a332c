"""Model stage, worker side: run one model in the isolated child and turn the outcome into a row."""

from __future__ import annotations

from dataclasses import replace

from spare_gen.config.schema import ModelSource
from spare_gen.stages.models.quality import assess
from spare_gen.stages.models.schema import ModelRow
from spare_gen.stages.models.settings import ModelSettings, ModelUnit
from spare_gen.runner.contract import run_in_child
from spare_gen.runner.isolation import Status
from spare_gen.runner.stage import transient_result

CSG_TARGET = "spare_gen.stages.models.child:make_csg_model"
FILE_TARGET = "spare_gen.stages.models.child:load_file_model"
HOUSE_TARGET = "spare_gen.stages.models.child:make_house_model"
TARGETS = {ModelSource.CSG.value: CSG_TARGET, "file": FILE_TARGET, ModelSource.HOUSES.value: HOUSE_TARGET}


def model_task(unit: ModelUnit, settings: ModelSettings) -> dict:
    """``unit``: {unit_id, model_id, source, ...}; returns a models.parquet row (a ``ModelRow``) plus timings."""
    base = ModelRow(model_id=unit["model_id"], source=unit["source"], source_path=unit.get("source_path", ""),
                    sha256=unit.get("sha256", ""), n_primitives=unit.get("n_primitives"))
    if unit.get("skip_reason"):
        return {**replace(base, status=Status.SKIPPED, error=unit["skip_reason"]).as_dict(), "seconds": 0.0}
    if unit.get("error"):  # found while listing the folder (spare_gen.stages.models.files): nothing to read
        return {**replace(base, status=Status.FAILED, error=unit["error"]).as_dict(), "seconds": 0.0}
    outcome = run_in_child(TARGETS[unit["source"]], unit, settings)
    if outcome.status is Status.TRANSIENT:
        return transient_result(outcome.error)
    timings = {"seconds": round(outcome.seconds, 4), "cpu_seconds": round(outcome.cpu_seconds, 4)}
    if outcome.status is not Status.OK:
        return {**replace(base, status=outcome.status, error=outcome.error).as_dict(), **timings}
    value = dict(outcome.value)
    if "timing" in value:  # CPU seconds per step of a CSG model
        timings["timing"] = value.pop("timing")
    row = replace(base, status=Status.OK, error=outcome.error, **value)
    if row.quality is None:  # CSG: the attempt rules already require one valid solid
        if row.valid is None or row.n_solids is None:
            raise RuntimeError(f"model {row.model_id}: the CSG child returned no valid/n_solids to assess")
        quality, reason = assess(row.valid, row.n_solids, row.n_solids)
        row = replace(row, quality=quality, quality_reason=reason)
    if row.source != "file":  # a generated model's content hash is that of the STEP file it was written to
        row = replace(row, sha256=row.step_sha256)
    return {**row.as_dict(), **timings}


def model_rows(result: dict) -> list[dict]:
    """The models.parquet rows of one unit's result: the result itself."""
    return [result]
