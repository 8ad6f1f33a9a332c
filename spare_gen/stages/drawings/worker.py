"""Drawings stage, worker side: exact HLR in the killable child, the mesh algorithm if that hangs or fails.

Exact HLR can run for minutes on some models (helical threads) and can crash; the child process is
killed after ``render.exact_timeout_s`` seconds of CPU time (not wall time: the choice must not depend
on the machine's load) and the model is drawn again with the mesh-based algorithm (``HLRBRep_PolyAlgo``)
within ``runner.timeout_s``, and if that runs out too (a spring, a thread), on a COARSE_FACTOR times coarser
mesh within another ``runner.timeout_s``. ``render.hlr = exact | poly`` forces one method (poly keeps its coarse
retry). A machine failure (a killed
child, a full disk) is not a reason to fall back: it is returned as ``transient`` and retried.
"""

from __future__ import annotations

from dataclasses import replace

from spare_gen.config.schema import HlrMethod
from spare_gen.canvas.poses import FIXED_VIEWS, RANDOM_VIEW_PREFIX
from spare_gen.stages.drawings.schema import DrawingRow
from spare_gen.stages.drawings.settings import DrawAttempt, DrawResult, DrawSettings, DrawUnit
from spare_gen.runner.contract import run_in_child
from spare_gen.runner.isolation import Outcome, Status
from spare_gen.runner.results import Timings

DRAW_TARGET = "spare_gen.stages.drawings.child:draw_unit"
COARSE_FACTOR = 5.0  # the last attempt's mesh deflection, times render.deflection (0.002 -> 1 % of the diagonal)


def view_names(random_views: int, fixed: tuple[str, ...] = FIXED_VIEWS) -> list[str]:
    return list(fixed) + [f"{RANDOM_VIEW_PREFIX}{i:03d}" for i in range(random_views)]


def failed_result(model_id: str, status: Status, error: str, random_views: int, fallback_reason: str = "",
                  seconds: float = 0.0, cpu_seconds: float = 0.0, fixed: tuple[str, ...] = FIXED_VIEWS) -> DrawResult:
    """A model that was not drawn: its drawings row and one views row per expected view, with the reason."""
    return DrawResult.not_drawn(model_id, status, error, view_names(random_views, fixed), fallback_reason,
                                Timings(child_wall_s=round(seconds, 4), child_cpu_s=round(cpu_seconds, 4)))


def _attempts(settings: DrawSettings) -> list[tuple[HlrMethod, float, float]]:
    """(method, CPU budget, deflection factor) to try in order: after the mesh algorithm, the mesh algorithm on a
    COARSE_FACTOR times coarser mesh, so a shape too costly for both (a spring, a thread) still gets a drawing
    (tried only after a timeout)."""
    mode, budget = settings.render.hlr, settings.timeout_s
    coarse = [(HlrMethod.POLY, budget, COARSE_FACTOR)]
    if mode is HlrMethod.AUTO:
        return [(HlrMethod.EXACT, settings.render.exact_timeout_s, 1.0), (HlrMethod.POLY, budget, 1.0), *coarse]
    return [(mode, budget, 1.0), *coarse] if mode is HlrMethod.POLY else [(mode, budget, 1.0)]


def _phase(method: HlrMethod, factor: float) -> str:
    return method.value if factor == 1.0 else f"{method.value}-coarse"


def _reason(method: str, outcome: Outcome) -> str:
    return f"{method} HLR {outcome.status.value}: {outcome.error}"


def draw_task(unit: DrawUnit, settings: DrawSettings) -> DrawResult:
    """Draw one model (in the child, with fallbacks): its drawings row and views rows."""
    model_id, random_views = unit["model_id"], settings.render.random_views
    if unit.get("skip_reason"):
        return failed_result(model_id, Status.SKIPPED, unit["skip_reason"], random_views,
                             fixed=settings.fixed_views())
    reasons, seconds, cpu, outcome = [], 0.0, 0.0, None
    for method, timeout, factor in _attempts(settings):
        if factor != 1.0 and outcome is not None and outcome.status is not Status.TIMEOUT:
            break  # a coarser mesh helps only a shape that ran out of time, not one that failed or crashed
        attempt: DrawAttempt = {**unit, "method": method.value, "deflection_factor": factor}
        outcome = run_in_child(DRAW_TARGET, attempt, settings, timeout=timeout, phase=_phase(method, factor))
        seconds, cpu = seconds + outcome.seconds, cpu + outcome.cpu_seconds
        if outcome.status is Status.TRANSIENT:
            return DrawResult.failure(model_id, Status.TRANSIENT, outcome.error)
        if outcome.status is Status.OK:
            break
        reasons.append(_reason(_phase(method, factor), outcome))
    assert outcome is not None
    if outcome.status is not Status.OK:
        return failed_result(model_id, outcome.status, "; ".join(reasons), random_views,
                             fallback_reason="; ".join(reasons[:-1]), seconds=seconds, cpu_seconds=cpu,
                             fixed=settings.fixed_views())
    model = DrawingRow(**outcome.value["model"])
    if reasons:  # an earlier method failed: say why, before any per-view reason from the child
        model = replace(model, fallback_reason="; ".join(reasons + ([model.fallback_reason] if model.fallback_reason
                                                                    else [])))
    return DrawResult(row=model, views=outcome.value["views"],
                      timings=Timings(child_wall_s=round(seconds, 4), child_cpu_s=round(cpu, 4),
                                      steps_cpu_s=outcome.value["timing"]))


def views_rows(result: DrawResult) -> list[dict]:
    """The views.parquet rows of one model's result."""
    return result.views


def drawings_rows(result: DrawResult) -> list[dict]:
    """The drawings.parquet row of one model's result."""
    return [result.row.as_dict()]
