"""What the question stage writes: each task's split tables, the cut views, the summary and the timings.

Splits are assembled and written, and the referenced files hashed, on the Dask workers. A split's rows are planned
(order, answers) in one task and built ROWS_PER_WRITER a task, so a large split spreads over every worker: each row
writer reads its models' whole unit results from their unit files and publishes the staged cut files they use. One
task per split writes its table and sends back only what the client needs (``SplitOutput``); the client merges that
and writes the small tables."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from spare_gen.atomic import write_parquet
from spare_gen.store import ownership
from spare_gen.config.base import EVERY_OPTION
from spare_gen.config.schema import Config, TaskName
from spare_gen.config.tasks import TASK_OPTIONS
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.publish.files import (
    manifest_rows, publish_answer_files, publish_staged, remove_unlisted,
)
from spare_gen.stages.questions.publish.preview import QUESTIONS_PER_SHEET
from spare_gen.stages.questions.row_parts import Accepted
from spare_gen.stages.questions.schema import (
    CUT_VIEWS_NAME, CUT_VIEWS_SCHEMA, FILE_SOURCES_NAME, FILE_SOURCES_SCHEMA, MANIFEST_NAME, MANIFEST_SCHEMA,
    QUESTIONS_DIR, FileSourceRow, QuestionCommon, split_path,
)
from spare_gen.stages.questions.select import needs_by_split, needs_by_stratum
from spare_gen.stages.questions.settings import QuestionResult, stage_name
from spare_gen.stages.questions.assembly.assemble import build_rows, row_plan
from spare_gen.stages.questions.assembly.fill import TaskFill
from spare_gen.stages.questions.assembly.inputs import Inputs
from spare_gen.stages.questions.assembly.plan import reuses_models
from spare_gen.stages.questions.tasks import TASK_SPECS, TASKS, question_schema, task_spec
from spare_gen.runner.stage import read_unit_result
from spare_gen.store.shards import rows_to_table

MANIFEST_CHUNK = 256  # referenced files hashed per Dask task
ROWS_PER_WRITER = 32  # question rows assembled and published per Dask task (a split's rows spread over workers)


def whole(out: Path, task: TaskName, item: Accepted) -> Accepted:
    """Runs on a Dask worker: ``item`` with its unit's whole result (read from its unit file; a task without
    per-model work has none), every staged cut file it names published."""
    if TASK_SPECS[task].run_unit is None:
        return item
    result = read_unit_result(out, stage_name(task), item.model_id, QuestionResult)
    return Accepted(item.model_id, item.stratum, replace(result, own=publish_staged(out, dict(result.own))),
                    item.views)


@dataclass(frozen=True)
class WrittenQuestion:
    """What the client keeps of a written question: its answer (None for a generation task), its stratum and the
    files it names."""

    answer: int | None
    n_primitives: int | None
    paths: tuple[str, ...]

    @classmethod
    def of(cls, row: QuestionCommon) -> "WrittenQuestion":
        return cls(row.correct_answer(), row.n_primitives, tuple(row.paths()))


@dataclass(frozen=True)
class SplitOutput:
    """What a split's writer sends back to the client: per question its answer, stratum and file paths; the first
    rows whole (the contact sheet's); every per-question copy (copy -> original); the rows of the cut objects'
    drawings as one Arrow table, so that their polylines never pass through the client as Python objects."""

    questions: list[WrittenQuestion]
    head: list[QuestionCommon]
    sources: dict[str, str]
    cut_views: pa.Table


@dataclass(frozen=True)
class RowsOutput:
    """What one writer of a split's consecutive rows sends on: the rows as a table, and the ``SplitOutput`` parts."""

    table: pa.Table
    questions: list[WrittenQuestion]
    head: list[QuestionCommon]
    sources: dict[str, str]
    cut_views: pa.Table


def plan_split(out: Path, seed: int, task: TaskName, split: str, items: list[Accepted], n_answers: int
               ) -> list[tuple[int, object, dict]]:
    """Runs on a Dask worker: the split's ``row_plan`` (reading the whole unit results only if the task's extras
    need them)."""
    if TASK_SPECS[task].split_extras is not None:
        items = [whole(out, task, item) for item in items]
    return row_plan(seed, task, split, items, n_answers)


def write_rows(out: Path, seed: int, task: TaskName, split: str, start: int, items: list[Accepted], answers: list,
               extras: list[dict]) -> RowsOutput:
    """Runs on a Dask worker: rows ``start``, ... of a split, whole, with their answer-side copies published."""
    items = [whole(out, task, item) for item in items]
    spec = TASK_SPECS[task]
    cut_views = [row for item in items for row in spec.cut_view_rows(item)] if spec.cut_view_rows else []
    sources: dict[str, str] = {}
    rows = publish_answer_files(out, task.value, build_rows(seed, task, split, start, items, answers, extras),
                                spec.content_named_columns, sources)
    return RowsOutput(rows_to_table([r.as_dict() for r in rows], question_schema(task)),
                      [WrittenQuestion.of(r) for r in rows], rows[:max(0, QUESTIONS_PER_SHEET - start)],
                      sources, rows_to_table(cut_views, CUT_VIEWS_SCHEMA))


def write_split(out: Path, task: TaskName, split: str, *parts: RowsOutput) -> SplitOutput:
    """Runs on a Dask worker: one task split's table from its row writers' parts (in row order)."""
    path = split_path(out, task.value, split)
    if any(p.table.num_rows for p in parts):
        write_parquet(path, pa.concat_tables([p.table for p in parts]).combine_chunks())
    else:  # no file for an empty split: Hugging Face datasets cannot load one
        path.unlink(missing_ok=True)
    sources: dict[str, str] = {}
    for p in parts:
        sources.update(p.sources)
    cut_views = [p.cut_views for p in parts if p.cut_views.num_rows]
    return SplitOutput([q for p in parts for q in p.questions], [r for p in parts for r in p.head], sources,
                       pa.concat_tables(cut_views).combine_chunks() if cut_views
                       else rows_to_table([], CUT_VIEWS_SCHEMA))


def _submit_rows(client, out: Path, seed: int, task: TaskName, split: str, items: list[Accepted], plan: list):
    """The future of one split's ``SplitOutput``: its rows written ROWS_PER_WRITER a task, then its table."""
    parts = []
    for start in range(0, len(plan), ROWS_PER_WRITER):
        chunk = plan[start:start + ROWS_PER_WRITER]
        parts.append(client.submit(write_rows, out, seed, task, split, start, [items[i] for i, _, _ in chunk],
                                   [a for _, a, _ in chunk], [e for _, _, e in chunk], pure=False))
    return client.submit(write_split, out, task, split, *parts, pure=False)


def write_splits(client, out: Path, config: Config, fills: dict[TaskName, TaskFill], planned: dict,
                 sources: dict[str, str]) -> dict[str, dict[str, SplitOutput]]:
    """Write every task split (rows ROWS_PER_WRITER a Dask task, then one task per table); return
    {task: {split: SplitOutput}}; ``sources`` gets every per-question copy."""
    where = Path(out).resolve()  # as the workers see it
    splits: dict[TaskName, dict[str, list[Accepted]]] = {}
    for task in TASKS:
        if planned[task.value] == 0:  # a task no longer asked for: the files spare_gen wrote for it go
            folder = out / QUESTIONS_DIR / task.value
            ownership.remove(out, [p.relative_to(out).as_posix() for p in sorted(folder.rglob("*")) if p.is_file()])
            continue
        splits[task] = {split: [a for (t, s, _), acc in fills[task].accepted.items() if s == split for a in acc]
                        for split in SPLITS}
    plans = {task: {split: client.submit(plan_split, where, config.seed, task, split, items,
                                               task_spec(task, config.questions).n_answers, pure=False)
                    for split, items in by_split.items()} for task, by_split in splits.items()}
    futures = {task: {split: _submit_rows(client, where, config.seed, task, split, items, plans[task][split].result())
                      for split, items in by_split.items()} for task, by_split in splits.items()}
    written: dict[str, dict[str, SplitOutput]] = {}
    for task, by_split in futures.items():
        written[task.value] = {}
        for split, future in by_split.items():
            output = future.result()
            sources.update(output.sources)  # in task and split order: a later copy of the same name wins, as before
            written[task.value][split] = output
        ownership.record(out, sources)  # the copies the row writers made: spare_gen's
        remove_unlisted(out, task.value, set(sources))
    return written


def _cut_views_table(written: dict[str, dict[str, SplitOutput]]) -> pa.Table:
    """Every split's cut view rows, in task and split order, stably sorted by (model_id, cut, view)."""
    tables = [o.cut_views for splits in written.values() for o in splits.values() if o.cut_views.num_rows]
    if not tables:
        return rows_to_table([], CUT_VIEWS_SCHEMA)
    table = pa.concat_tables(tables)
    order = pc.sort_indices(table, sort_keys=[("model_id", "ascending"), ("cut", "ascending"),
                                              ("view", "ascending")])
    return table.take(order).combine_chunks()


def write_file_tables(client, out: Path, written: dict[str, dict[str, SplitOutput]], sources: dict[str, str]
                      ) -> list[str]:
    """``file_sources.parquet``, the manifest ``files.parquet`` (files hashed on the Dask workers, MANIFEST_CHUNK
    paths a task) and ``cut_views.parquet`` (vector drawings of the cut objects the questions use: the validator
    re-checks rule 3 on them); every file path the questions name (with repeats)."""
    write_parquet(out / QUESTIONS_DIR / FILE_SOURCES_NAME, rows_to_table(
        [FileSourceRow(path=p, source=s).as_dict() for p, s in sorted(sources.items())], FILE_SOURCES_SCHEMA))
    paths = [p for splits in written.values() for o in splits.values() for q in o.questions for p in q.paths]
    distinct, where = sorted(set(paths)), Path(out).resolve()
    chunks = [client.submit(manifest_rows, where, distinct[i:i + MANIFEST_CHUNK], pure=False)
              for i in range(0, len(distinct), MANIFEST_CHUNK)]
    write_parquet(out / QUESTIONS_DIR / MANIFEST_NAME,
                  rows_to_table([row.as_dict() for chunk in client.gather(chunks) for row in chunk], MANIFEST_SCHEMA))
    write_parquet(out / QUESTIONS_DIR / CUT_VIEWS_NAME, _cut_views_table(written))
    return paths


def _strata_key(stratum) -> str:
    return "null" if stratum is None else str(stratum)


def recorded_options(config: Config) -> dict:
    """The tasks' options the summary records (``TaskOptions.RECORDED_IN_SUMMARY``), as JSON values."""
    section = config.questions.model_dump(mode="json", context=EVERY_OPTION)
    return {name: section[name] for options in TASK_OPTIONS.values() for name in options.RECORDED_IN_SUMMARY}


def summary(config: Config, inputs: Inputs, requested, planned, quotas, fills, written) -> dict:
    available = Counter({_strata_key(s): len(v) for s, v in inputs.by_stratum().items()})
    answers, mix = {}, {}
    for task, splits in written.items():
        n_answers = task_spec(task, config.questions).n_answers
        answers[task] = {s: [sum(q.answer == k for q in o.questions) for k in range(n_answers)]
                         for s, o in splits.items()}
        mix[task] = {s: dict(sorted(Counter(_strata_key(q.n_primitives) for q in o.questions).items()))
                     for s, o in splits.items()}
    record = {
        "seed": config.seed,
        "tolerance_px": config.questions.duplicate_tolerance_px,
        **recorded_options(config),
        "split_ratios": list(config.questions.split),
        "allow_fewer": config.questions.allow_fewer,
        "requested": requested,
        "planned": planned,
        "produced": {t: {s: len(o.questions) for s, o in splits.items()} for t, splits in written.items()},
        "usable_models": dict(sorted(available.items())),
        "needed_models": {_strata_key(s): n for s, n in needed_models(config, quotas).items()},
        "filtered_models": dict(sorted(inputs.filtered.items())),
        "rejected_models": {t.value: dict(sorted(f.rejections.items())) for t, f in fills.items()},
        "rejected_candidates": {t.value: dict(sorted(f.attempts.items())) for t, f in fills.items()},
        "surplus_models": {t.value: f.surplus for t, f in fills.items()},
        "answers": answers,
        "primitive_mix": mix,
    }
    if reuses_models(config):  # recorded when set only: datasets made before the option keep their bytes
        record["model_reuse"] = config.questions.model_reuse.value
    return record


def needed_models(config: Config, quotas) -> dict:
    """Usable models the quotas need per stratum: their sum, or with model reuse the largest task's per split."""
    if not reuses_models(config):
        return needs_by_stratum(quotas)
    out: Counter = Counter()
    for (_, stratum), n in needs_by_split(quotas).items():
        out[stratum] += n
    return dict(out)


def timings(fills: dict[TaskName, TaskFill], written: dict, parts: dict) -> dict:
    tasks = {}
    for task, fill in fills.items():
        n = sum(len(o.questions) for o in written.get(task.value, {}).values())
        tasks[task.value] = {
            "questions": n, "models_processed": fill.processed, "rounds": fill.rounds,
            "wall_s": round(fill.wall_seconds, 4),
            "questions_per_wall_s": round(n / fill.wall_seconds, 4) if fill.wall_seconds > 0 else None,
            "unit_steps_cpu_s": {k: round(v, 4) for k, v in sorted(fill.timings.items())},  # summed over units
        }
    return {"tasks": tasks, "driver_wall_s": {k: round(v, 4) for k, v in parts.items()}}
