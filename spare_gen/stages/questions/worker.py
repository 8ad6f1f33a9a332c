"""Worker side of the question stage: a task's OpenCASCADE work run in the Dask worker's isolated child."""

from __future__ import annotations

from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.settings import QuestionSettings, QuestionUnit
from spare_gen.runner import contract
from spare_gen.runner.isolation import Status
from spare_gen.runner.stage import transient_result


def run_in_child(target: str, unit: QuestionUnit, settings: QuestionSettings, timeout: float | None = None) -> dict:
    """``target(unit, settings, rng)``'s result, or a UNIT_FAILED rejection naming the status; ``seconds`` and
    ``cpu_seconds`` (the child's wall and CPU time) added.

    A machine failure is returned as ``transient``: the stage runner retries it and never records it.
    """
    outcome = contract.run_in_child(target, unit, settings, timeout=timeout)
    if outcome.status is Status.OK:
        result = dict(outcome.value)
    elif outcome.status is Status.TRANSIENT:
        return transient_result(outcome.error)
    else:
        result = {"accepted": False, "rule": QuestionRejection.UNIT_FAILED.value,
                  "error": f"{outcome.status.value}: {outcome.error}"}
    result["seconds"], result["cpu_seconds"] = round(outcome.seconds, 4), round(outcome.cpu_seconds, 4)
    return result
