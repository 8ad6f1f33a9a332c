"""Worker side of the question stage: a task's OpenCASCADE work run in the Dask worker's isolated child."""

from __future__ import annotations

from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.settings import QuestionResult, QuestionSettings, QuestionUnit
from spare_gen.runner import contract
from spare_gen.runner.isolation import Status
from spare_gen.runner.results import Timings


def run_in_child(target: str, unit: QuestionUnit, settings: QuestionSettings,
                 timeout: float | None = None) -> QuestionResult:
    """``target(unit, settings, rng)``'s result (``{"accepted": ..., **the task's own part}``, its CPU seconds by
    part under ``timings``), or a UNIT_FAILED rejection naming the status; with the child's wall and CPU time.

    A machine failure is returned as ``transient``: the stage runner retries it and never records it.
    """
    outcome = contract.run_in_child(target, unit, settings, timeout=timeout)
    if outcome.status is Status.TRANSIENT:
        return QuestionResult.failure(unit["model_id"], Status.TRANSIENT, outcome.error)
    if outcome.status is Status.OK:
        value = dict(outcome.value)
    else:
        value = {"accepted": False, "rule": QuestionRejection.UNIT_FAILED.value,
                 "error": f"{outcome.status.value}: {outcome.error}"}
    steps = value.pop("timings", None)
    return QuestionResult.stated(unit["model_id"], value, Timings(
        child_wall_s=round(outcome.seconds, 4), child_cpu_s=round(outcome.cpu_seconds, 4), steps_cpu_s=steps))
