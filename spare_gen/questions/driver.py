"""Question stage driver: plan quotas, fill them on Dask, assemble and write the five task datasets.

Outputs under ``<out>/questions/``: ``<task>/{train,val,test}.parquet``, ``files.parquet`` (hash of
every referenced file), ``summary.json`` (counts, rejections by rule; no timings, so equal configs give
equal bytes) and ``timings.json``; plus the dataset card ``<out>/README.md`` and ``<out>/preview/``.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from pathlib import Path

from spare_gen.atomic import write_json, write_parquet
from spare_gen.config.schema import Config, TaskName
from spare_gen.shards import rows_to_table
from spare_gen.questions import card, preview
from spare_gen.questions.assemble import assemble_split
from spare_gen.questions.fill import TaskFill, fill_task, shortfalls, trim_to_balance
from spare_gen.questions.files import manifest_table, row_paths
from spare_gen.questions.inputs import Inputs, load_inputs
from spare_gen.questions.layout import SPLITS
from spare_gen.questions.outputs import (
    CUT_VIEWS_NAME, FILE_SOURCES_NAME, MANIFEST_NAME, QUESTIONS_DIR, SUMMARY_NAME, TIMINGS_NAME, split_path,
)
from spare_gen.questions.per_question_files import FILE_SOURCES_SCHEMA, publish_answer_files, remove_unlisted
from spare_gen.questions.schema import CUT_VIEWS_SCHEMA, question_schema
from spare_gen.questions.settings import QuestionSettings
from spare_gen.questions.select import (
    ModelQueues, NotEnoughModels, fit_counts, needs_by_stratum, plan_quotas, shortage, stratum_label,
)
from spare_gen.questions.tasks import TASK_SPECS, TASKS

ADVICE = "raise models.csg.count (or add CAD files), or set questions.allow_fewer = true"


def _strata_sorted(strata) -> list:
    return sorted(set(strata), key=lambda s: -1 if s is None else s)


def plan(config: Config, inputs: Inputs) -> tuple[dict, dict, dict]:
    """(requested counts, planned counts, quotas); raise NotEnoughModels before any work (rule 7)."""
    q = config.questions
    requested = {t.value: int(q.counts.get(t, 0)) for t in TASKS}
    available = {s: len(ids) for s, ids in inputs.by_stratum().items()}
    if not available:
        raise NotEnoughModels(f"questions: no usable models (filtered by rule: {dict(inputs.filtered)}); {ADVICE}")
    strata = _strata_sorted(available)
    quotas = plan_quotas(requested, q.split, SPLITS, strata)
    missing = shortage(quotas, available)
    planned = requested
    if missing:
        if not q.allow_fewer:
            raise NotEnoughModels(f"questions: {missing}; {ADVICE}")
        planned = fit_counts(requested, q.split, SPLITS, available)
        quotas = plan_quotas(planned, q.split, SPLITS, strata)
    return requested, planned, quotas


def _fill_all(client, config: Config, out: Path, inputs: Inputs, quotas: dict) -> dict[TaskName, TaskFill]:
    queues = ModelQueues(inputs.by_stratum(), config.seed)
    first = {key: queues.take(key[2], n) for key, n in quotas.items()}  # every task's first block, in task order
    fills = {}
    for task in TASKS:
        keys = {k: n for k, n in quotas.items() if k[0] == task.value}
        fills[task] = fill_task(client, QuestionSettings.from_config(config, out, task), keys,
                                {k: first[k] for k in keys}, queues, inputs,
                                debug=config.debug.model_dump(mode="json"), progress=config.runner.progress)
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
            f"(needed {sum(quotas.values())} plus replacements, usable {len(inputs.strata)}; "
            f"rejected by rule: {rejected}); {ADVICE}")
    for task, fill in fills.items():
        trim_to_balance(fill.accepted, {k: n for k, n in quotas.items() if k[0] == task.value})


def _write_splits(out: Path, config: Config, fills: dict[TaskName, TaskFill], planned: dict,
                  sources: dict[str, str]) -> dict:
    """Write every task split; return {task: {split: rows}}; ``sources`` gets every per-question copy."""
    written: dict[str, dict[str, list[dict]]] = {}
    for task in TASKS:
        task_dir = out / QUESTIONS_DIR / task.value
        if planned[task.value] == 0:
            shutil.rmtree(task_dir, ignore_errors=True)
            continue
        written[task.value] = {}
        for split in SPLITS:
            items = [a for (t, s, _), acc in fills[task].accepted.items() if s == split for a in acc]
            rows = publish_answer_files(out, task.value, assemble_split(config.seed, task, split, items),
                                        TASK_SPECS[task].content_named_columns, sources)
            path = split_path(out, task.value, split)
            if rows:  # no file for an empty split: Hugging Face datasets cannot load one
                write_parquet(path, rows_to_table(rows, question_schema(task)))
            else:
                path.unlink(missing_ok=True)
            written[task.value][split] = rows
        remove_unlisted(out, task.value, set(sources))
    return written


def _cut_view_rows(fills: dict[TaskName, TaskFill]) -> list[dict]:
    """Vector drawings of the cut objects the questions use (the validator re-checks rule 3 on them)."""
    rows = [row for task, fill in fills.items() if TASK_SPECS[task].cut_view_rows is not None
            for acc in fill.accepted.values() for item in acc for row in TASK_SPECS[task].cut_view_rows(item)]
    return sorted(rows, key=lambda r: (r["model_id"], r["cut"], r["view"]))


def _strata_key(stratum) -> str:
    return "null" if stratum is None else str(stratum)


def _summary(config, inputs, requested, planned, quotas, fills, written) -> dict:
    available = Counter({_strata_key(s): len(v) for s, v in inputs.by_stratum().items()})
    answers, mix = {}, {}
    for task, splits in written.items():
        n_answers = TASK_SPECS[TaskName(task)].n_answers
        answers[task] = {s: [sum(r["answer"] == k for r in rows) for k in range(n_answers)] for s, rows in splits.items()}
        mix[task] = {s: dict(sorted(Counter(_strata_key(r["n_primitives"]) for r in rows).items()))
                     for s, rows in splits.items()}
    return {
        "seed": config.seed,
        "tolerance_px": config.questions.duplicate_tolerance_px,
        "cutters": config.questions.cutters.value,
        "split_ratios": list(config.questions.split),
        "allow_fewer": config.questions.allow_fewer,
        "point_cloud_points": config.questions.point_cloud_points,
        "requested": requested,
        "planned": planned,
        "produced": {t: {s: len(rows) for s, rows in splits.items()} for t, splits in written.items()},
        "usable_models": dict(sorted(available.items())),
        "needed_models": {_strata_key(s): n for s, n in needs_by_stratum(quotas).items()},
        "filtered_models": dict(sorted(inputs.filtered.items())),
        "rejected_models": {t.value: dict(sorted(f.rejections.items())) for t, f in fills.items()},
        "rejected_candidates": {t.value: dict(sorted(f.attempts.items())) for t, f in fills.items()},
        "surplus_models": {t.value: f.surplus for t, f in fills.items()},
        "answers": answers,
        "primitive_mix": mix,
    }


def _timings(fills: dict[TaskName, TaskFill], written: dict, parts: dict) -> dict:
    tasks = {}
    for task, fill in fills.items():
        n = sum(len(rows) for rows in written.get(task.value, {}).values())
        tasks[task.value] = {
            "questions": n, "models_processed": fill.processed, "rounds": fill.rounds,
            "wall_s": round(fill.wall_seconds, 4),
            "questions_per_wall_s": round(n / fill.wall_seconds, 4) if fill.wall_seconds > 0 else None,
            "unit_steps_cpu_s": {k: round(v, 4) for k, v in sorted(fill.timings.items())},  # summed over units
        }
    return {"tasks": tasks, "driver_wall_s": {k: round(v, 4) for k, v in parts.items()}}


def run_questions(client, config: Config, out: Path) -> str:
    """Generate the question sets; return a one-line summary. Raises NotEnoughModels (rule 7)."""
    out = Path(out)
    parts: dict[str, float] = {}
    t = time.monotonic()
    inputs = load_inputs(out, config.questions.allow_flagged_cad)
    requested, planned, quotas = plan(config, inputs)
    parts["plan"] = time.monotonic() - t
    fills = _fill_all(client, config, out, inputs, quotas)
    _check_shortfalls(config, quotas, fills, inputs)
    t = time.monotonic()
    sources: dict[str, str] = {}
    written = _write_splits(out, config, fills, planned, sources)
    write_parquet(out / QUESTIONS_DIR / FILE_SOURCES_NAME, rows_to_table(
        [{"path": p, "source": s} for p, s in sorted(sources.items())], FILE_SOURCES_SCHEMA))
    paths = [p for task, splits in written.items() for rows in splits.values() for r in rows
             for p in row_paths(r, TaskName(task))]
    write_parquet(out / QUESTIONS_DIR / MANIFEST_NAME, manifest_table(out, paths))
    write_parquet(out / QUESTIONS_DIR / CUT_VIEWS_NAME,
                  rows_to_table(_cut_view_rows(fills), CUT_VIEWS_SCHEMA))
    summary = _summary(config, inputs, requested, planned, quotas, fills, written)
    write_json(out / QUESTIONS_DIR / SUMMARY_NAME, summary)
    parts["write"] = time.monotonic() - t
    t = time.monotonic()
    card.write_card(out, config, summary)
    parts["card"] = time.monotonic() - t
    t = time.monotonic()
    preview.write_contact_sheets(out, written)
    parts["preview"] = time.monotonic() - t
    write_json(out / QUESTIONS_DIR / TIMINGS_NAME, _timings(fills, written, parts))
    produced = {t: sum(v.values()) for t, v in summary["produced"].items()}
    rejected = sum(sum(v.values()) for v in summary["rejected_models"].values())
    return f"questions: {produced}; {len(paths)} files; {rejected} candidate models rejected (counts by rule in README.md)"
