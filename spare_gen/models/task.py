"""Model stage, worker side: run one model in the isolated child and turn the outcome into a row."""

from __future__ import annotations

from spare_gen.models.quality import assess
from spare_gen.runner.isolation import Status, worker_executor


def model_task(unit: dict, ctx: dict) -> dict:
    """``unit``: {unit_id, model_id, source, ...}; returns a models.parquet row (plus bookkeeping)."""
    base = {
        "model_id": unit["model_id"],
        "source": unit["source"],
        "source_path": unit.get("source_path", ""),
        "sha256": unit.get("sha256", ""),
        "n_primitives": unit.get("n_primitives"),
    }
    if unit.get("skip_reason"):
        return {**base, "status": Status.SKIPPED.value, "error": unit["skip_reason"], "seconds": 0.0}
    if unit["source"] == "csg":
        target = "spare_gen.models.stage:make_csg_model"
        kwargs = {
            "model_id": unit["model_id"], "index": unit["index"], "n_primitives": unit["n_primitives"],
            "seed": ctx["seed"], "out_dir": ctx["out_dir"], "max_attempts": ctx["csg"]["max_attempts"],
            "min_volume_fraction": ctx["csg"]["min_volume_fraction"]
        }
    else:
        target = "spare_gen.models.stage:load_file_model"
        kwargs = {"model_id": unit["model_id"], "path": unit["source_path"], "out_dir": ctx["out_dir"]}
    outcome = worker_executor().run(target, kwargs, ctx["timeout_s"])
    row = {**base, "status": outcome.status.value, "error": outcome.error, "seconds": round(outcome.seconds, 4)}
    if outcome.status is Status.OK:
        row.update(outcome.value)
        if "quality" not in row:  # CSG: the attempt rules already require one valid solid
            row["quality"], row["quality_reason"] = assess(row["valid"], row["n_solids"], row["n_solids"])
    return row
