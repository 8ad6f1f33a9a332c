"""Running a question unit's OpenCASCADE work in the worker's isolated child (``"module:function"`` targets)."""

from __future__ import annotations

from spare_gen.questions.rejections import QuestionRejection
from spare_gen.runner.isolation import Status, worker_executor


def run_in_child(target: str, kwargs: dict, timeout: float) -> dict:
    """The child's result, or a UNIT_FAILED rejection naming the status; ``seconds`` added either way.

    A machine failure is returned as ``transient``: the stage runner retries it and never records it.
    """
    outcome = worker_executor().run(target, kwargs, timeout)
    if outcome.status is Status.OK:
        result = dict(outcome.value)
    elif outcome.status is Status.TRANSIENT:
        return {"status": Status.TRANSIENT.value, "error": outcome.error}
    else:
        result = {"accepted": False, "rule": QuestionRejection.UNIT_FAILED.value,
                  "error": f"{outcome.status.value}: {outcome.error}"}
    result["seconds"] = round(outcome.seconds, 4)
    return result
