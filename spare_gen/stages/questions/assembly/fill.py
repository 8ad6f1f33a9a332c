"""Fill each (task, split, stratum) quota with accepted models, in rounds, replacing rejected models.

Round 1 runs every quota's first models; each later round takes spare models of the same stratum for
what is still missing (more than missing, by the task's observed acceptance rate, to keep rounds few).
A round's units are fixed by earlier results only, and those depend only on (seed, task, model), so
the filled quotas do not depend on the number of workers.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.row_parts import Accepted
from spare_gen.stages.questions.select import ModelQueues, QuotaKey
from spare_gen.stages.questions.settings import QuestionResult, QuestionSettings, QuestionUnit
from spare_gen.stages.questions.assembly.inputs import WORKER_INPUTS, Inputs, add_unit_inputs
from spare_gen.stages.questions.tasks import TASK_SPECS
from spare_gen.runner.contract import RunOptions
from spare_gen.runner.stage import run_stage
from spare_gen.stages.questions.schema import STAGED_CUTS_DIR
from spare_gen.store import ownership

MIN_ACCEPTANCE = 0.25  # never over-provision a round by more than 4x


@dataclass
class TaskFill:
    """What filling one task produced: accepted models per quota key and rejection counters."""

    accepted: dict[QuotaKey, list[Accepted]] = field(default_factory=dict)
    rejections: Counter = field(default_factory=Counter)  # model-level rule -> models
    attempts: Counter = field(default_factory=Counter)  # candidate-level rule -> attempts (cut objects)
    surplus: int = 0  # accepted in an over-provisioned round but not needed
    processed: int = 0
    rounds: int = 0
    wall_seconds: float = 0.0
    timings: Counter = field(default_factory=Counter)  # summed per-unit timings by part (boolean, hlr, ...)


def _units(task: TaskName, model_ids: list[str], inputs: Inputs, out: Path) -> list[QuestionUnit]:
    units: list[QuestionUnit] = [{"unit_id": m, "task": task.value, "model_id": m} for m in model_ids]
    unit_inputs = TASK_SPECS[task].unit_inputs
    if unit_inputs is not None:
        add_unit_inputs(unit_inputs, units, inputs, out)
    return units


def run_units(client, model_ids: list[str], inputs: Inputs, settings: QuestionSettings,
              options: RunOptions = RunOptions(), round_: int = 1) -> dict[str, QuestionResult]:
    """model_id -> the unit's ``QuestionResult.decision`` (its decision and timings, without the task's bulk); a
    task without per-model work (no ``run_unit``) accepts every usable model."""
    task = settings.task
    run_unit = TASK_SPECS[task].run_unit
    if run_unit is None:
        if options.progress and model_ids:
            print(f"spare-gen: questions {task.value}: {len(model_ids)} models (no per-model work)", file=sys.stderr)
        return {m: QuestionResult(model_id=m, accepted=True) for m in model_ids}
    if not model_ids:
        return {}
    unit_inputs = TASK_SPECS[task].unit_inputs
    label = f"questions {task.value}" + ("" if round_ == 1 else f" (round {round_}, replacing rejected models)")
    rows = run_stage(client, run_unit, _units(task, model_ids, inputs, Path(settings.out_dir)),
                     settings.model_copy(update={"round": round_}), options.model_copy(update={"label": label}),
                     reply=QuestionResult.decision,  # on the worker; the split writer reads the unit file
                     expand=None if unit_inputs is None else WORKER_INPUTS.get(unit_inputs))
    # the objects the units staged (three_view_to_isometric's cuts): spare_gen's, written by this run
    out = Path(settings.out_dir)
    ownership.record_written_since(out, [p for m in model_ids if (out / STAGED_CUTS_DIR / m).is_dir()
                                         for p in sorted((out / STAGED_CUTS_DIR / m).iterdir())])
    return {r.model_id: r for r in rows}


def fill_task(client, settings: QuestionSettings, quotas: dict[QuotaKey, int], first: dict[QuotaKey, list[str]],
              queues: ModelQueues, inputs: Inputs, options: RunOptions,
              excluded: Mapping[str, QuestionRejection]) -> TaskFill:
    """Run rounds until every quota of ``settings.task`` is met or its stratum has no spare models left.

    ``excluded``: models the task leaves out (``TaskSpec.model_filter``), rejected by their rule without a unit.
    """
    start = time.monotonic()
    fill = TaskFill(accepted={k: [] for k in quotas})
    todo = {k: list(v) for k, v in first.items() if v}
    accepted_total = 0
    while todo:
        fill.rounds += 1
        batch = [m for k in todo for m in todo[k]]
        results = run_units(client, [m for m in batch if m not in excluded], inputs, settings, options,
                            round_=fill.rounds)
        results.update({m: QuestionResult(model_id=m, accepted=False, own={"rule": excluded[m].value})
                        for m in batch if m in excluded})
        for key, model_ids in todo.items():
            for mid in model_ids:
                r = results[mid]
                fill.processed += 1
                fill.attempts.update(r.attempt_rejections)
                fill.timings.update(r.timings.steps_cpu_s or {})
                if not r.accepted:
                    fill.rejections[r.rule or "unknown"] += 1
                    continue
                accepted_total += 1
                if len(fill.accepted[key]) < quotas[key]:
                    fill.accepted[key].append(Accepted(mid, key[2], r, inputs.views[mid]))
                else:
                    fill.surplus += 1
        rate = max(accepted_total / max(fill.processed, 1), MIN_ACCEPTANCE)
        todo = {}
        for key, quota in quotas.items():
            missing = quota - len(fill.accepted[key])
            if missing > 0:
                spare = queues.take_for(key, math.ceil(missing / rate))
                if spare:
                    todo[key] = spare
    fill.wall_seconds = time.monotonic() - start
    return fill


def shortfalls(quotas: dict[QuotaKey, int], fills: dict[TaskName, TaskFill]) -> dict[QuotaKey, int]:
    out = {}
    for key, quota in quotas.items():
        have = len(fills[TaskName(key[0])].accepted[key])
        if have < quota:
            out[key] = quota - have
    return out


def trim_to_balance(accepted: dict[QuotaKey, list[Accepted]], quotas: dict[QuotaKey, int]) -> None:
    """After a shortfall (allow_fewer): cut each (task, split) so its strata differ by at most one again."""
    groups: dict[tuple[str, str], list[QuotaKey]] = {}
    for key in quotas:
        groups.setdefault(key[:2], []).append(key)
    for keys in groups.values():
        have = [min(len(accepted[k]), quotas[k]) for k in keys]
        cap = min(have) + 1
        for k in keys:
            accepted[k] = accepted[k][:cap]
