"""Stages that write tables: workers write Parquet parts, so the client never holds a table (``spare_gen.store.shards``).

Units are sorted by ``unit_id`` and cut into shards of ``shard_units``; one Dask task runs one shard on a
worker: each unit through the same task as ``spare_gen.runner.stage`` (test hooks, machine faults retried
there), then one part per table (``<out>/<table>/part-<i>-<hash>.parquet``) and the part's index
``<out>/.units/<stage>/part-<i>-<hash>.json`` (per unit: fingerprint, status, error, the files it made),
written last: a part counts once its index exists. The index records where rows are, never the rows, so
resume data stays a small fraction of the output.

Resume: a shard whose part already exists with every unit's fingerprint unchanged is not run at all; in
another shard, a unit whose fingerprint is unchanged (and whose files exist) is not run again but its
rows are copied from the part that holds them. Parts are named by a hash of what they hold, so no part
is overwritten while another shard may still read it; parts no shard of this run wrote are removed at
the end, after the files every index lists are added to the ownership ledger (``spare_gen.store.ownership``). A unit still failing because of the machine after the retries is left out of its part (and
recorded nowhere); the stage then raises ``MachineFailure`` and the next run retries just those units.
"""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from spare_gen.store import ownership, shards
from spare_gen.atomic import write_json, write_parquet
from spare_gen.store.shards import rows_to_table
from spare_gen.config.schema import DebugConfig
from spare_gen.runner.contract import RunOptions, StageSettings, Unit
from spare_gen.rows import escaped_text
from spare_gen.runner.results import is_transient
from spare_gen.runner.unit_events import UnitCounter, UnitTally
from spare_gen.runner.stage import (
    MACHINE_RETRIES,
    TIMINGS_DIR,
    Retries,
    Sealed,
    Task,
    lost_worker,
    machine_failure,
    new_run_token,
    output_files,
    progress_bar,
    run_unit,
    settle_all,
    unit_dir,
    unit_fingerprints,
    worker_count,
)


IN_FLIGHT_PER_WORKER = 4


@dataclass(frozen=True)
class TableOut:
    """A table a stage writes: its folder name, schema, the unit id column, and the rows of one unit's result, as the
    table writer takes them (``rows`` must be a module-level function: it travels to the workers)."""

    name: str
    schema: pa.Schema
    rows: Callable[[Any], list[dict]]
    key: str = "model_id"


@dataclass(frozen=True)
class IndexEntry:
    """A unit in a part's index: the fingerprint it was made under, its status and error, the files it made, and
    (once read back) the part that holds its rows."""

    fingerprint: str | None
    status: str | None
    error: str
    files: tuple[str, ...]
    part: str = ""  # the part named by the index file it was read from; not written

    def as_json(self) -> dict:
        return {"fingerprint": self.fingerprint, "status": self.status, "error": self.error,
                "files": list(self.files)}

    @classmethod
    def from_json(cls, entry: dict, part: str = "") -> "IndexEntry":
        return cls(entry.get("fingerprint"), entry.get("status"), entry.get("error", ""),
                   tuple(entry.get("files", ())), part)


@dataclass(frozen=True)
class ShardOutcome:
    """What one ``execute_shard`` call made: its part (None when the part could not be written) and the units
    that failed because of the machine (unit_id -> error)."""

    part: str | None
    transient: dict[str, str]


def _composition(units: Sequence[Unit], fingerprints: dict[str, str]) -> str:
    return "\n".join(f"{u['unit_id']}:{fingerprints[u['unit_id']]}" for u in units)


def _index_path(out_dir: str, stage: str, part: str) -> Path:
    return unit_dir(out_dir, stage) / f"{Path(part).stem}.json"


def _load_indexes(out_dir: str, stage: str, tables: tuple[TableOut, ...]) -> dict[str, IndexEntry]:
    """unit_id -> the index entry (its part too) of every unit in a complete part on disk."""
    known: dict[str, IndexEntry] = {}
    folder = unit_dir(out_dir, stage)
    if not folder.is_dir():
        return known
    for path in sorted(folder.glob(f"{shards.PART_PREFIX}*.json")):
        part = f"{path.stem}.parquet"
        if not all((Path(out_dir) / t.name / part).is_file() for t in tables):
            continue
        try:
            index = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        for uid, entry in index.get("units", {}).items():
            known[uid] = IndexEntry.from_json(entry, part)
    return known


def _indexed_files(out_dir: str, stage: str) -> list[str]:
    """Every file any unit of any index of the stage on disk lists (complete part or not)."""
    found: list[str] = []
    folder = unit_dir(out_dir, stage)
    for path in sorted(folder.glob(f"{shards.PART_PREFIX}*.json")) if folder.is_dir() else ():
        try:
            units = json.loads(path.read_text()).get("units", {})
        except (OSError, json.JSONDecodeError, AttributeError):
            continue
        found.extend(rel for entry in units.values() for rel in IndexEntry.from_json(entry).files)
    return found


def _reusable(entry: IndexEntry | None, fingerprint: str, out_dir: str) -> bool:
    return (entry is not None and entry.fingerprint == fingerprint
            and all((Path(out_dir) / rel).is_file() for rel in entry.files))


def _exact(pieces: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """The pieces as one table of exactly ``schema`` (its metadata too), one chunk per column: the bytes of a
    part then depend on its rows only, not on which rows were copied from an old part and which were made."""
    if not pieces:
        return schema.empty_table()
    table = pa.concat_tables([p.select(schema.names).cast(schema) for p in pieces]).combine_chunks()
    return pa.Table.from_arrays(table.columns, schema=schema)


def done_units(units: Sequence[Unit], settings: StageSettings, tables: tuple[TableOut, ...]) -> int:
    """How many of ``units`` are already in a part on disk with an unchanged fingerprint and their files present
    (running the stage under ``settings`` would reuse them)."""
    out_dir = str(Path(settings.out_dir).resolve())
    fingerprints = unit_fingerprints(units, settings, out_dir)
    known = _load_indexes(out_dir, settings.stage, tables)
    return sum(_reusable(known.get(uid), fp, out_dir) for uid, fp in fingerprints.items())


def all_done(units: Sequence[Unit], settings: StageSettings, tables: tuple[TableOut, ...]) -> bool:
    """True if every unit is already in a part on disk with an unchanged fingerprint and its files present:
    running the stage would reuse everything."""
    return done_units(units, settings, tables) == len(units)


def execute_shard(task: Task, sealed: Sealed, settings: StageSettings, tables: tuple[TableOut, ...], index: int,
                  attempt: int = 0, debug: DebugConfig | None = None, topic: str | None = None) -> ShardOutcome:
    """Runs on a worker: the shard's units, then its parts. ``sealed``: (units, fingerprints, reuse), ``reuse``
    being unit_id -> its index entry in an existing part (``part`` names it), for units whose rows are copied
    instead of made again. ``topic``: where the count of units done goes, for the client's bar
    (``spare_gen.runner.unit_events``; None: nowhere).

    Returns the part and the units that failed because of the machine; the units' timings go to
    ``timings/<stage>/<part>.json``.
    """
    units, fingerprints, reuse = sealed.open()
    out_dir, stage = settings.out_dir, settings.stage
    pieces: dict[str, list[pa.Table]] = {t.name: [] for t in tables}
    entries: dict[str, IndexEntry] = {}
    transient: dict[str, str] = {}
    timings: dict[str, dict] = {}
    old_parts: dict[tuple[str, str], pa.Table] = {}
    for unit in UnitCounter(topic, index).each(units):
        uid = unit["unit_id"]
        if uid in reuse:
            source = reuse[uid].part
            for t in tables:
                if (t.name, source) not in old_parts:
                    old_parts[(t.name, source)] = shards.read(Path(out_dir) / t.name / source)
                old = old_parts[(t.name, source)]
                pieces[t.name].append(old.filter(pc.equal(old[t.key], uid)))
            entries[uid] = reuse[uid]
            continue
        for retry in range(MACHINE_RETRIES + 1):
            result = run_unit(task, unit, settings, attempt + retry, debug)
            if not is_transient(result):
                break
        if is_transient(result):
            transient[uid] = result.error
            continue
        timings[uid] = result.timings.as_json()
        for t in tables:
            pieces[t.name].append(rows_to_table(t.rows(result), t.schema))  # it escapes what a table cannot hold
        record = _escaped(result.record())  # text its index can hold, as its tables do
        entries[uid] = IndexEntry(fingerprints[uid], record.get("status"), record.get("error") or "",
                                  tuple(output_files(record)))
    done = [u for u in units if u["unit_id"] not in transient]
    part = shards.part_name(index, _composition(done, fingerprints))
    try:
        for t in tables:
            folder = shards.prepare_folder(Path(out_dir) / t.name)
            table = _exact(pieces[t.name], t.schema)
            write_parquet(folder / part, table)
        write_json(_index_path(out_dir, stage, part), {"units": {uid: e.as_json() for uid, e in entries.items()}})
    except OSError as exc:  # a full disk: the machine's fault, the whole shard is retried
        return ShardOutcome(None, {u["unit_id"]: f"writing the shard: {exc}" for u in units})
    if timings:
        try:  # a report, never a reason to fail a run
            write_json(Path(out_dir) / TIMINGS_DIR / stage / f"{Path(part).stem}.json", timings)
        except OSError:
            pass
    return ShardOutcome(part, transient)


def _escaped(record: dict) -> dict:
    """A result's record with its text as a JSON index can hold it: a file name's undecodable bytes escaped
    (``spare_gen.rows.escaped_text``), ordinary text unchanged."""
    return {k: escaped_text(v) if isinstance(v, str) else v for k, v in record.items()}


def _plan(groups: list[list[Unit]], fingerprints: dict[str, str], known: dict[str, IndexEntry],
          out_dir: str) -> tuple[dict[int, str], dict[int, dict[str, IndexEntry]]]:
    """(shard -> its part, for shards whose part is already written; shard -> its reusable units' index entries,
    for the shards to run)."""
    parts: dict[int, str] = {}
    todo: dict[int, dict[str, IndexEntry]] = {}
    for i, group in enumerate(groups):
        name = shards.part_name(i, _composition(group, fingerprints))
        reuse = {u["unit_id"]: known[u["unit_id"]] for u in group
                 if _reusable(known.get(u["unit_id"]), fingerprints[u["unit_id"]], out_dir)}
        if len(reuse) == len(group) and all(e.part == name for e in reuse.values()):
            parts[i] = name  # the same part, already written: nothing to do
        else:
            todo[i] = reuse
    return parts, todo


def _run_shards(client, task: Task, groups: list[list[Unit]], fingerprints: dict[str, str],
                todo: dict[int, dict[str, IndexEntry]], parts: dict[int, str], settings: StageSettings,
                tables: tuple[TableOut, ...], options: RunOptions) -> dict[str, str]:
    """Run the shards in ``todo`` (a few in flight per worker, retried on a lost worker), adding each written part
    to ``parts``; returns unit_id -> error of the units that failed because of the machine. The bar moves per unit
    as the workers report them (``spare_gen.runner.unit_events``), not only when a shard ends."""
    stage = settings.stage
    run_token = new_run_token()
    failed_machine: dict[str, str] = {}
    total = sum(len(g) for g in groups)
    bar = progress_bar(stage, total, total - sum(len(groups[i]) for i in todo), options)
    tally = UnitTally(client, bar, enabled=options.progress)

    def submit(i: int, attempt: int):
        shard = Sealed((groups[i], {u["unit_id"]: fingerprints[u["unit_id"]] for u in groups[i]}, todo[i]))
        return client.submit(execute_shard, task, shard, settings, tables, i, attempt, options.debug, tally.topic,
                             key=f"{stage}-shard{i:05d}-{attempt}-{run_token}", pure=False)

    def lost(i: int, exc: BaseException) -> ShardOutcome:
        error = lost_worker(exc)
        return ShardOutcome(None, {u["unit_id"]: error for u in groups[i]})

    def settle(i: int, res: ShardOutcome) -> list:
        if res.part is None:
            retry = retries.again(i)
            if retry is not None:
                return [(retry, i)]
        else:
            parts[i] = res.part
        failed_machine.update(res.transient)
        tally.finished(i, len(groups[i]))
        return [(submit(j, 0), j) for j in itertools.islice(waiting, 1)]

    retries = Retries(submit)
    waiting = iter(sorted(todo))
    # a few shards in flight per worker, not all of them: the client's memory does not grow with the stage
    in_flight = IN_FLIGHT_PER_WORKER * worker_count(client)
    try:
        futures = {submit(i, 0): i for i in itertools.islice(waiting, in_flight)}
        settle_all(futures, lost, settle)
    finally:
        tally.close()
        bar.close()
    return failed_machine


def _drop_stale(out_dir: str, stage: str, tables: tuple[TableOut, ...], keep: set[str]) -> None:
    """Record every file a unit of this stage wrote, and the parts, indexes and timing files of the parts in
    ``keep`` (the proof that spare_gen wrote them), then remove the table parts, unit indexes and timing files of
    parts not in ``keep`` that spare_gen wrote and that still hold its bytes (a user's file in those folders, or one
    changed since, is kept: ``spare_gen.store.ownership``)."""
    out = Path(out_dir)
    units, timings = unit_dir(out_dir, stage), out / TIMINGS_DIR / stage
    mine = [rel for part in sorted(keep) for rel in (*(out / t.name / part for t in tables),
                                                      units / f"{Path(part).stem}.json",
                                                      timings / f"{Path(part).stem}.json")]
    ownership.record(out_dir, [*_indexed_files(out_dir, stage), *mine])  # before the stale indexes go
    stale = []
    for t in tables:
        folder = shards.prepare_folder(out / t.name)
        stale += [f"{t.name}/{p.name}" for p in sorted(folder.iterdir()) if p.name not in keep]
    for folder in (units, timings):
        if folder.is_dir():
            stale += [path.relative_to(out).as_posix() for path in sorted(folder.iterdir())
                      if path.suffix == ".json" and f"{path.stem}.parquet" not in keep]
    ownership.remove(out_dir, stale, listed=False)  # only what the ledger names with its bytes unchanged


def run_sharded_stage(
    client,
    task: Task,
    units: Sequence[Unit],
    settings: StageSettings,
    tables: tuple[TableOut, ...],
    options: RunOptions = RunOptions(),
) -> list[str]:
    """Run the stage; its tables end up as parts under ``<out>/<table>/``. Returns the part names, in order.

    The client keeps per unit only its id and fingerprint: statuses are in the tables, timings in the
    per-part files under ``timings/<stage>/``.

    Raises MachineFailure if some units still failed because of the machine after the retries.
    """
    stage, out_dir = settings.stage, str(Path(settings.out_dir).resolve())
    units = sorted(units, key=lambda u: u["unit_id"])
    fingerprints = unit_fingerprints(units, settings, out_dir)
    # no units: one empty part per table, so the table exists with its schema
    groups = [units[i:i + options.shard_units] for i in range(0, len(units), options.shard_units)] or [[]]
    parts, todo = _plan(groups, fingerprints, _load_indexes(out_dir, stage, tables), out_dir)
    reused_units = sum(len(reuse) for reuse in todo.values()) + sum(len(groups[i]) for i in parts)
    if reused_units and todo:
        print(f"spare-gen: {stage}: {reused_units} of {len(units)} units already done, resuming", file=sys.stderr)
    failed_machine = _run_shards(client, task, groups, fingerprints, todo, parts, settings, tables, options) \
        if todo else {}
    _drop_stale(out_dir, stage, tables, set(parts.values()))
    if failed_machine:
        raise machine_failure(stage, failed_machine)
    return [parts[i] for i in sorted(parts)]
