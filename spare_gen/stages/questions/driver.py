"""Question stage driver: plan quotas (``plan``), fill them on Dask (``fill``), assemble and write the five task
datasets (``assemble``, ``outputs``).

Outputs under ``<out>/questions/``: ``<task>/{train,val,test}.parquet``, ``files.parquet`` (hash of
every referenced file), ``summary.json`` (counts, rejections by rule; no timings, so equal configs give
equal bytes) and ``timings.json``, and the contact sheets ``<out>/preview/<task>.png`` and ``.svg``. The dataset card is
composed at the end of the job (``spare_gen.card``).
"""

from __future__ import annotations

import time
from pathlib import Path

from spare_gen.atomic import write_json
from spare_gen.config.schema import Config, TaskName
from spare_gen.stages.questions.layout import empty_splits, empty_splits_warning
from spare_gen.stages.questions.publish import preview
from spare_gen.stages.questions.schema import QUESTIONS_DIR, SUMMARY_NAME, TIMINGS_NAME, QuestionsSummary
from spare_gen.stages.questions.select import NotEnoughModels, stratum_label
from spare_gen.stages.questions.assembly import outputs
from spare_gen.stages.questions.assembly.fill import TaskFill, fill_task, shortfalls, trim_to_balance
from spare_gen.stages.questions.assembly.inputs import Inputs, load_inputs
from spare_gen.stages.questions.assembly.plan import ADVICE, model_queues, plan, reuses_models
from spare_gen.stages.questions.tasks import TASK_SPECS, TASKS, drawn_views, question_settings
from spare_gen.runner.contract import RunOptions, Summary
from spare_gen.stage_table import QUESTIONS


def _fill_all(client, config: Config, out: Path, inputs: Inputs, quotas: dict) -> dict[TaskName, TaskFill]:
    shared = None if reuses_models(config) else model_queues(config, inputs)  # reuse: each task its own queues
    queues = {t: shared or model_queues(config, inputs) for t in TASKS}
    # every task's first block, in task order
    first = {key: queues[TaskName(key[0])].take_for(key, n) for key, n in quotas.items()}
    fills = {}
    for task in TASKS:
        keys = {k: n for k, n in quotas.items() if k[0] == task.value}
        model_filter = TASK_SPECS[task].model_filter
        fills[task] = fill_task(client, question_settings(config, out, task), keys,
                                {k: first[k] for k in keys}, queues[task], inputs,
                                RunOptions.from_config(config),
                                model_filter(config, out, inputs.views) if model_filter else {})
    return fills


def _check_shortfalls(config: Config, quotas: dict, fills: dict[TaskName, TaskFill], inputs: Inputs) -> None:
    short = shortfalls(quotas, fills)
    if not short:
        return
    if not config.questions.allow_fewer:
        (task, split, stratum), n = next(iter(short.items()))
        rejected = {t.value: dict(f.rejections) for t, f in fills.items() if f.rejections}
        raise NotEnoughModels(
            f"questions: after rejections {task} {split} is {n} {stratum_label(stratum)} short "
            f"({sum(short.values())} questions short in all) and no usable models are left "
            f"(its quota {quotas[(task, split, stratum)]}; usable {stratum_label(stratum)} in all splits: "
            f"{sum(1 for s in inputs.strata.values() if s == stratum)} of {len(inputs.strata)} models; "
            f"rejected by rule: {rejected}); {ADVICE}")
    for task, fill in fills.items():
        trim_to_balance(fill.accepted, {k: n for k, n in quotas.items() if k[0] == task.value})


def run_questions(client, config: Config, out: Path) -> Summary:
    """Generate the question sets; return the summary. Raises NotEnoughModels (rule 7)."""
    out = Path(out)
    parts: dict[str, float] = {}
    t = time.monotonic()
    inputs = load_inputs(out, config.questions.allow_flagged_cad, drawn_views(config))
    requested, planned, quotas = plan(config, inputs)
    parts["plan"] = time.monotonic() - t
    fills = _fill_all(client, config, out, inputs, quotas)
    _check_shortfalls(config, quotas, fills, inputs)
    t = time.monotonic()
    sources: dict[str, str] = {}  # the files of what the questions use, and nothing else, enter the dataset
    written = outputs.write_splits(client, out, config, fills, planned, sources)
    paths = outputs.write_file_tables(client, out, written, sources)
    summary = outputs.summary(config, inputs, requested, planned, quotas, fills, written)
    write_json(out / QUESTIONS_DIR / SUMMARY_NAME, summary)
    parts["write"] = time.monotonic() - t
    t = time.monotonic()
    preview.write_contact_sheets(out, {t: {s: o.head for s, o in splits.items()} for t, splits in written.items()})
    parts["preview"] = time.monotonic() - t
    write_json(out / QUESTIONS_DIR / TIMINGS_NAME, outputs.timings(fills, written, parts))
    told = QuestionsSummary.from_record(summary)
    produced = {t: sum(v.values()) for t, v in told.produced.items()}
    rejected = sum(sum(v.values()) for v in told.rejected_models.values())
    empty = empty_splits(told.produced)
    warning = f"\n  {empty_splits_warning(empty)}" if empty else ""
    return Summary(QUESTIONS.name, f"questions: {produced}; {len(paths)} files; {rejected} candidate models rejected "
                          f"(counts by rule in README.md){warning}")
