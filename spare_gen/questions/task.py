"""Question stage, worker side: thin Dask wrappers around the pure per-model checks and the child functions."""

from __future__ import annotations

import time

from spare_gen.config.schema import TaskName
from spare_gen.questions.symmetry import check_isometric_to_pose, check_pose_to_isometric
from spare_gen.questions.tasks import Rejection
from spare_gen.runner.isolation import Status, worker_executor

# Cut sets do several booleans and draw four objects: their child gets this many per-model budgets.
CUT_TIMEOUT_FACTOR = 4


def _child(target: str, kwargs: dict, timeout: float) -> dict:
    outcome = worker_executor().run(target, kwargs, timeout)
    if outcome.status is Status.OK:
        result = dict(outcome.value)
    elif outcome.status is Status.TRANSIENT:  # the machine's fault: the stage runner retries, never records
        return {"status": Status.TRANSIENT.value, "error": outcome.error}
    else:
        result = {"accepted": False, "rule": Rejection.UNIT_FAILED.value,
                  "error": f"{outcome.status.value}: {outcome.error}"}
    result["seconds"] = round(outcome.seconds, 4)
    return result


def question_task(unit: dict, ctx: dict) -> dict:
    """``unit``: {unit_id, task, model_id, ...}; returns {accepted, rule, ...task payload, seconds}."""
    task = TaskName(unit["task"])
    start = time.monotonic()
    if task is TaskName.ISOMETRIC_TO_POSE:
        result = check_isometric_to_pose(unit["views"], ctx["tolerance_px"])
    elif task is TaskName.POSE_TO_ISOMETRIC:
        result = check_pose_to_isometric(unit["views"], ctx["tolerance_px"])
    elif task is TaskName.POINT_CLOUD_GENERATION:
        kwargs = {"model_id": unit["model_id"], "shape_path": unit["shape_path"], "count": ctx["n_points"],
                  "seed": ctx["seed"], "task": task.value}
        return {"model_id": unit["model_id"],
                **_child("spare_gen.questions.pointcloud:model_points", kwargs, ctx["timeout_s"])}
    elif task is TaskName.THREE_VIEW_TO_ISOMETRIC:
        kwargs = {"model_id": unit["model_id"], "shape_path": unit["shape_path"], "out_dir": ctx["out_dir"],
                  "seed": ctx["seed"], "render": ctx["render"], "framing": unit["framing"],
                  "hlr_method": unit["hlr_method"], "tolerance_px": ctx["tolerance_px"],
                  "max_attempts": ctx["max_cut_attempts"], "debug": ctx.get("debug"),
                  "cutters": ctx.get("cutters", "spare_gen")}
        return {"model_id": unit["model_id"], **_child(
            "spare_gen.questions.cuts:make_cut_set", kwargs, ctx["timeout_s"] * CUT_TIMEOUT_FACTOR)}
    else:
        raise ValueError(f"task {task.value!r} has no per-model unit")
    return {"model_id": unit["model_id"], **result, "seconds": round(time.monotonic() - start, 4)}
