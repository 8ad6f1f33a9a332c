"""Run one stage as Dask tasks, one unit each, keeping only completed units (resume-safe).

The contract of a stage (``spare_gen.runner.contract``): typed frozen settings, a list of units (JSON-able
dicts with a unique ``unit_id``), and a worker task ``(unit, settings) -> result`` (the stage's own
``spare_gen.runner.results`` class, named by ``settings.RESULT``) that sends the unit's
work ``(unit, settings, rng)`` to the worker's killable child (``run_in_child``). This module is the one
thin Dask wrapper every stage shares.

Each finished unit is written atomically to ``<out>/.units/<stage>/<unit_id>.json.gz`` by the worker that
ran it, with a fingerprint of everything that decides its result: the stage settings, the unit's own
payload, and the content hash of the shape file it reads (``shape_path``). A rerun reuses a unit only if
that fingerprint is unchanged; anything else reruns it, and since its outputs' hashes feed the units
downstream, everything downstream of it too.

A result with status ``transient`` (the machine failed: a killed child, a full disk, a lost worker) is
never written: the unit is retried up to ``MACHINE_RETRIES`` times, and if it still fails the stage
raises ``MachineFailure`` after every other unit is done, so the next run retries just those.
A result's ``timings`` are kept out of the unit files and the tables: they go to
``<out>/timings/<stage>.json``, so equal configs give equal bytes everywhere else.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pickle
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TypeVar, cast

from spare_gen.atomic import bounded_name, write_bytes, write_json
from spare_gen.console import progress
from spare_gen.filehash import sha256_file
from spare_gen.store import ownership
from spare_gen.store.inventory import is_file_column
from spare_gen.store.packed import is_packed
from spare_gen.runner import testhooks
from spare_gen.config.schema import DebugConfig
from spare_gen.runner.contract import RunOptions, StageSettings, Unit
from spare_gen.runner.isolation import Status, input_caused
from spare_gen.runner.results import R, ResultType, UnitResult, is_transient

S = TypeVar("S", bound=StageSettings)
# a stage's worker task: (the stage's own Unit, its settings) -> the unit's result (the stage's ``settings.RESULT``)
Task = Callable[[Any, S], Any]
# adds to units what they read from the output folder (e.g. drawings' polylines), on a worker: (units, out_dir)
Expand = Callable[[Any, str], list[Any]]  # (the stage's units, out dir) -> those units with what they read


class Sealed:
    """A task argument pickled once by the client and opened by the worker.

    Dask walks every dict and list of a task's arguments looking for futures, and its scheduler unpickles and
    repickles them; for a unit that carries drawings' polylines that costs the client and the scheduler more
    than the unit's work. Sealed, an argument is one opaque block of bytes on its way.
    """

    __slots__ = ("data",)

    def __init__(self, value: Any):
        self.data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def __getstate__(self):
        return self.data

    def __setstate__(self, data: bytes):
        self.data = data

    def open(self) -> Any:
        return pickle.loads(self.data)

Reply = Callable[[Any], Any]  # what of a unit's result a worker sends back to the client (a result of its class)

MACHINE_RETRIES = 2
MAX_BATCH = 8  # units per Dask task at most (run_stage)
TASKS_PER_WORKER = 16  # Dask tasks per worker at least, before units are batched
MIN_EXPAND = 32  # units per load_units task at least (each reads the output folder's tables once)
UNITS_DIR = ".units"
UNIT_NAME_CHARS = 200  # a unit file's name at most (the unit id, cut and hashed beyond), ".json.gz" aside
TIMINGS_DIR = "timings"


class MachineFailure(RuntimeError):
    """Units that failed because of the machine (not their input) even after retries; nothing was recorded."""


def unit_dir(out_dir: str | os.PathLike, stage: str) -> Path:
    return Path(out_dir) / UNITS_DIR / stage


def _unit_path(out_dir: str | os.PathLike, stage: str, unit_id: str) -> Path:
    return unit_dir(out_dir, stage) / f"{bounded_name(unit_id, UNIT_NAME_CHARS)}.json.gz"


FINGERPRINT_KEY = "unit_fingerprint"  # the unit file's own key beside the result's


@dataclass(frozen=True)
class UnitFile:
    """A finished unit's file: its result's record and the fingerprint it was made under."""

    result: dict[str, Any]
    fingerprint: str | None

    def write(self, path: Path) -> None:
        """Gzipped JSON (no timestamp in the header): a unit's result is mostly numbers, which compress well."""
        record = {**self.result, FINGERPRINT_KEY: self.fingerprint}
        data = json.dumps(record, sort_keys=True, separators=(",", ":"), default=str).encode()
        write_bytes(path, gzip.compress(data, compresslevel=6, mtime=0))

    @classmethod
    def read(cls, path: Path) -> "UnitFile":
        """Raises OSError, EOFError or ValueError for a file that is missing, cut short or not JSON."""
        record = json.loads(gzip.decompress(path.read_bytes()))
        fingerprint = record.pop(FINGERPRINT_KEY, None)
        return cls(record, fingerprint)


@dataclass(frozen=True)
class Loaded:
    """A ``load_units`` result, kept on the worker that made it: the whole units (``expand``'s additions
    included) and their fingerprints, both by unit_id."""

    units: dict[str, Unit]
    fingerprints: dict[str, str]


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, default=str, separators=(",", ":")).encode()


def unit_fingerprint(settings_fp: str, unit: Unit, shape_hashes: dict[str, str], out_dir: str = "") -> str:
    """Hash of the settings, the unit's payload and the content of the shape file it reads.

    Paths inside ``out_dir`` count relative to it, so a dataset's bookkeeping does not depend on where it is.
    """
    digest = hashlib.sha256(settings_fp.encode())
    payload = _canonical(unit)
    digest.update(payload.replace(out_dir.encode(), b"<out>") if out_dir else payload)
    shape = unit.get("shape_path")
    if shape:
        digest.update(shape_hashes.get(shape, "").encode())
    return digest.hexdigest()[:24]


def unit_fingerprints(units: Sequence[Unit], settings: StageSettings, out_dir: str) -> dict[str, str]:
    """unit_id -> fingerprint of every unit (settings, payload, shape file); duplicate ids are a bug: ValueError."""
    ids = [u["unit_id"] for u in units]
    if len(set(ids)) != len(ids):
        dup = [k for k, v in Counter(ids).items() if v > 1][:5]
        raise ValueError(f"stage {settings.stage}: duplicate unit ids {dup}")
    settings_fp, shapes = settings.fingerprint(), _shape_hashes(units)
    return {u["unit_id"]: unit_fingerprint(settings_fp, u, shapes, out_dir) for u in units}


def machine_failure(stage: str, failed: dict[str, str]) -> MachineFailure:
    """The one-line error of units that still failed because of the machine (unit_id -> error)."""
    uid, error = sorted(failed.items())[0]
    return MachineFailure(
        f"{stage}: {len(failed)} unit(s) failed because of the machine, not their input "
        f"(e.g. {uid}: {error}); nothing was recorded for them: fix the cause and rerun "
        f"the same command to finish")


def _shape_hashes(units: Sequence[Unit]) -> dict[str, str]:
    paths = sorted({u["shape_path"] for u in units if u.get("shape_path")})
    return {p: (sha256_file(Path(p)) if Path(p).is_file() else "") for p in paths}


def run_unit(task: Task, unit: Unit, settings: StageSettings, attempt: int = 0,
             debug: DebugConfig | None = None) -> UnitResult:
    """Runs on a worker: ``task(unit, settings)`` inside the unit's test-hook context, never raising.

    An OSError of the worker itself is the machine's fault (``transient``) unless the input decided it
    (``input_caused``); any other exception of the task wrapper is recorded as the unit's failure, so one unit
    never loses the run.
    """
    start, uid = time.monotonic(), unit["unit_id"]
    result: UnitResult
    with testhooks.unit_context(settings.stage, uid, attempt, debug):
        try:
            result = task(unit, settings)
        except OSError as exc:  # the worker could not read or write: the machine's fault, or the input's
            result = settings.RESULT.failure(uid, Status.FAILED if input_caused(exc) else Status.TRANSIENT,
                                             f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # the task wrapper itself failed: record, never lose the run
            result = settings.RESULT.failure(uid, Status.FAILED, f"{type(exc).__name__}: {exc}")
    return result.timed(task_wall_s=round(time.monotonic() - start, 4))


def load_units(expand: Expand, units: list[Unit], settings: StageSettings, out_dir: str) -> Loaded:
    """Runs on a worker: the units with what ``expand`` adds, and their fingerprints. The result stays on the
    workers; the client fetches only the fingerprints."""
    full = expand(units, out_dir)
    return Loaded({u["unit_id"]: u for u in full}, unit_fingerprints(full, settings, out_dir))


def loaded_fingerprints(loaded: Loaded) -> dict[str, str]:
    """Runs on a worker: the fingerprints of a ``load_units`` result."""
    return loaded.fingerprints


def execute_units(task: Task, sealed: Sealed, settings: StageSettings, attempt: int = 0,
                  debug: DebugConfig | None = None, reply: Reply | None = None,
                  loaded: Loaded | None = None) -> list[UnitResult]:
    """Runs on a worker: ``execute_unit`` for each (unit, fingerprint) of a sealed batch, in order. One Dask task
    runs several units of a large stage, so the client and the scheduler handle fewer tasks (``batch_size``).
    ``loaded`` (a ``load_units`` result, passed worker to worker): the whole units, for the ids the batch names."""
    return [execute_unit(task, unit if loaded is None else loaded.units[unit["unit_id"]], settings, fingerprint,
                         attempt, debug, reply)
            for unit, fingerprint in sealed.open()]


def execute_unit(task: Task, unit: Unit, settings: StageSettings, fingerprint: str, attempt: int = 0,
                 debug: DebugConfig | None = None, reply: Reply | None = None) -> UnitResult:
    """Runs on a worker: the task, then its unit file (the unit counts as done only once that exists).

    Returns the result, or ``reply(result)`` if given (the unit file keeps the whole result). A transient
    result, or an OSError while writing the unit file, is returned but never written.
    """
    result = run_unit(task, unit, settings, attempt, debug)
    stage, out_dir = settings.stage, settings.out_dir
    if is_transient(result):
        return result
    try:
        UnitFile(result.record(), fingerprint).write(_unit_path(out_dir, stage, unit["unit_id"]))
    except OSError as exc:
        return settings.RESULT.failure(unit["unit_id"], Status.TRANSIENT, f"writing the unit file: {exc}")
    return reply(result) if reply is not None else result


def read_unit_result(out_dir: str | os.PathLike, stage: str, unit_id: str, result: ResultType[R]) -> R:
    """The whole stored result of a finished unit (its unit file), as its stage's ``result`` class, e.g. on a worker
    after ``run_stage`` returned only a ``reply`` of it."""
    return result.from_record(UnitFile.read(_unit_path(out_dir, stage, unit_id)).result)


def is_number_list(value: list) -> bool:
    """True for a (nested) list of numbers, judged by its first leaf: result lists are homogeneous."""
    first = value
    while isinstance(first, list) and first:
        first = first[0]
    return isinstance(first, (int, float))


def output_files(result) -> list[str]:
    """Relative paths a unit's result names (keys as ``spare_gen.store.inventory.is_file_column`` reads them, or ``step``).

    Coordinate lists (a views row holds hundreds of points) are skipped whole, not walked point by point.
    """
    found: list[str] = []

    def walk(value, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():  # numbers and None name no file: not looked at
                if isinstance(v, (dict, list, str)) and not is_packed(value, str(k)):  # packed bytes name no file
                    walk(v, str(k))
        elif isinstance(value, list):
            if value and is_number_list(value):
                return
            for v in value:
                if isinstance(v, (dict, list, str)):
                    walk(v, key)
        elif isinstance(value, str) and value and (is_file_column(key) or key == "step") \
                and not value.startswith("/") and "/" in value:
            found.append(value)

    walk(result)
    return found


def load_done(out_dir: str | os.PathLike, stage: str, fingerprints: dict[str, str],
              result: ResultType[R]) -> dict[str, R]:
    """Finished units of this stage whose fingerprint is unchanged and whose output files all exist, as the stage's
    ``result`` class.

    A unit whose files were removed (the clean-up after a run removes files it wrote that no table names) runs again.
    """
    done = {}
    for uid, fingerprint in fingerprints.items():
        path = _unit_path(out_dir, stage, uid)
        if not path.exists():
            continue
        try:
            stored = UnitFile.read(path)
        except (OSError, EOFError, ValueError):  # unreadable or cut short (gzip, JSON): run again
            continue
        if stored.fingerprint != fingerprint:
            continue
        if all((Path(out_dir) / rel).is_file() for rel in output_files(stored.result)):
            done[uid] = result.from_record(stored.result)
    return done


def _write_timings(out_dir: str, stage: str, timings: dict[str, dict]) -> None:
    if not timings:
        return
    path = Path(out_dir) / TIMINGS_DIR / f"{stage}.json"
    previous = {}
    if path.exists():
        try:
            previous = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            previous = {}
    try:
        write_json(path, {**previous, **timings})
    except OSError:  # timings are a report, never a reason to fail a run
        pass


def read_timings(out_dir: str | os.PathLike, stage: str) -> dict[str, dict]:
    """unit_id -> timings of a stage: ``timings/<stage>.json`` and, for stages that write parts, the
    per-part files ``timings/<stage>/*.json`` their workers write."""
    found: dict[str, dict] = {}
    base = Path(out_dir) / TIMINGS_DIR
    for path in [base / f"{stage}.json", *sorted((base / stage).glob("*.json"))]:
        try:
            found.update(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError):
            continue
    return found


def batch_size(units: int, workers: int) -> int:
    """Units per Dask task: one for a small stage; for a large one up to ``MAX_BATCH``, keeping at least
    ``TASKS_PER_WORKER`` tasks per worker so the work still spreads evenly."""
    return max(1, min(MAX_BATCH, units // (TASKS_PER_WORKER * max(1, workers))))


def lost_worker(exc: BaseException) -> str:
    """The error of units whose worker died or whose connection broke (a machine failure)."""
    return f"worker lost ({type(exc).__name__}: {exc})"


def new_run_token() -> str:
    """A run's part of its Dask keys: keys are never reused, even by a later run on the same cluster."""
    return uuid.uuid4().hex[:8]


def progress_bar(stage: str, total: int, done: int, options: RunOptions):
    """The stage's progress bar on stderr (units; ``done`` of them already done), off unless ``options.progress``;
    named ``options.label`` when the caller gives one."""
    return progress(total, options.label or stage, "unit", options.progress, done)


class Retries:
    """Machine-fault retries of a stage's jobs: ``again(job)`` submits the job's next attempt
    (``submit(job, attempt)``) while it has retries left (``MACHINE_RETRIES``), else returns None."""

    def __init__(self, submit: Callable[[Any, int], Any]):
        self.submit, self.attempts = submit, Counter[Any]()

    def again(self, job):
        if self.attempts[job] >= MACHINE_RETRIES:
            return None
        self.attempts[job] += 1
        return self.submit(job, self.attempts[job])


def settle_all(futures: dict, lost: Callable[[Any, BaseException], Any],
               settle: Callable[[Any, Any], list]) -> None:
    """Wait for every future of ``futures`` (future -> its job), and for those ``settle`` adds, as they finish.

    ``settle(job, result)`` consumes a finished job's result and returns the (future, job) pairs it submitted
    next (a retry, the next waiting job); ``lost(job, exc)`` is the result of a job whose worker died
    (KilledWorker) or whose connection broke. Each result is released as soon as it is read.
    """
    from distributed import as_completed

    pending = as_completed(list(futures))
    for fut in pending:
        job = futures.pop(fut)
        try:
            result = fut.result()
        except Exception as exc:  # noqa: BLE001 - the worker died or the connection broke: a machine fault
            result = lost(job, exc)
        for nxt, nxt_job in settle(job, result):
            futures[nxt] = nxt_job
            pending.add(nxt)


@dataclass(frozen=True)
class UnitPlan:
    """How a stage's units are loaded: their groups (units loaded together; batches never mix groups), each
    group's ``load_units`` future (None without ``expand``), every unit's fingerprint and its group."""

    groups: list[list[Unit]]
    loaded: list[Any]
    fingerprints: dict[str, str]
    group_of: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "group_of", {u["unit_id"]: k for k, g in enumerate(self.groups) for u in g})


def _load(client, units: Sequence[Unit], settings: StageSettings, out_dir: str, expand: Expand | None,
          workers: int) -> UnitPlan:
    """The units' groups, their ``load_units`` futures and fingerprints (on the workers with ``expand``)."""
    if expand is None:
        return UnitPlan([list(units)], [None], unit_fingerprints(units, settings, out_dir))
    size = max(MIN_EXPAND, -(-len(units) // workers))
    groups = [list(units[i:i + size]) for i in range(0, len(units), size)] or [[]]
    loaded = [client.submit(load_units, expand, g, settings, out_dir, pure=False) for g in groups]
    fingerprints: dict[str, str] = {}
    for part in client.gather([client.submit(loaded_fingerprints, f, pure=False) for f in loaded]):
        fingerprints.update(part)
    return UnitPlan(groups, loaded, fingerprints)


def worker_count(client) -> int:
    """The cluster's workers now (at least 1)."""
    return max(1, len(client.scheduler_info().get("workers", {})))


def _reused(out_dir: str, settings: StageSettings, plan: UnitPlan, reply: Reply | None) -> dict[str, UnitResult]:
    """unit_id -> the result (or its ``reply``) of every unit already done with an unchanged fingerprint."""
    results = load_done(out_dir, settings.stage, plan.fingerprints, settings.RESULT)
    return results if reply is None else {uid: reply(r) for uid, r in results.items()}


@dataclass
class _StageRun:
    """The units of one ``run_stage`` call still to run, sent to the workers in batches, retried one by one after
    a machine fault. ``settle`` files each finished unit into ``results`` (``timings`` beside it) or, after the
    last retry, ``failed_machine``."""

    client: Any
    task: Task
    settings: StageSettings
    options: RunOptions
    reply: Reply | None
    plan: UnitPlan
    todo: dict[str, Unit]
    results: dict[str, UnitResult]
    run_token: str = field(default_factory=new_run_token)
    timings: dict[str, dict] = field(default_factory=dict)
    failed_machine: dict[str, UnitResult] = field(default_factory=dict)

    def sealed(self, batch: list[str]) -> Sealed:
        return Sealed([(self.todo[uid], self.plan.fingerprints[uid]) for uid in batch])

    def submit_retry(self, uid: str, attempt: int):
        """A retry: one unit."""
        # settings are small: pass them by value (scatter(broadcast=True) was seen to hang with busy workers)
        return self.client.submit(
            execute_units, self.task, self.sealed([uid]), self.settings, attempt, self.options.debug, self.reply,
            self.plan.loaded[self.plan.group_of[uid]], key=f"{self.settings.stage}-{uid}-{attempt}-{self.run_token}",
            pure=False)

    def batches(self, workers: int) -> list[list[str]]:
        """The units to run, group by group, in batches of ``batch_size``."""
        size = batch_size(len(self.todo), workers)
        batches: list[list[str]] = []
        for group in self.plan.groups:
            first = [u["unit_id"] for u in group if u["unit_id"] in self.todo]
            batches.extend(first[i:i + size] for i in range(0, len(first), size))
        return batches

    def submit_first(self, batches: list[list[str]]) -> dict:
        """Every unit's first attempt as one graph (one message, not one per unit): future -> its batch."""
        n, stage = len(batches), self.settings.stage
        return dict(zip(self.client.map(
            execute_units, [self.task] * n, [self.sealed(b) for b in batches], [self.settings] * n, [0] * n,
            [self.options.debug] * n, [self.reply] * n, [self.plan.loaded[self.plan.group_of[b[0]]] for b in batches],
            key=[f"{stage}-{b[0]}-0-{self.run_token}" for b in batches], pure=False), batches))

    def settle(self, retries: Retries, bar, batch: list[str], got: list[UnitResult]) -> list:
        again = []
        for uid, res in zip(batch, got):
            if is_transient(res):
                retry = retries.again(uid)
                if retry is not None:
                    again.append((retry, [uid]))
                    continue
                self.failed_machine[uid] = res
            else:
                self.results[uid] = res  # timings stay in memory for the caller's report
                self.timings[uid] = res.timings.as_json()
            bar.update(1)
        return again

    def run(self, total: int, workers: int) -> None:
        """Run every unit to do, with a progress bar of ``total``; write the timings of those that finished."""
        retries = Retries(self.submit_retry)
        futures = self.submit_first(self.batches(workers))
        bar = progress_bar(self.settings.stage, total, len(self.results), self.options)
        try:
            failure = self.settings.RESULT.failure
            settle_all(futures, lambda batch, exc: [failure(uid, Status.TRANSIENT, lost_worker(exc)) for uid in batch],
                       lambda batch, got: self.settle(retries, bar, batch, got))
        finally:
            bar.close()
            _write_timings(str(Path(self.settings.out_dir).resolve()), self.settings.stage, self.timings)


def run_stage(
    client,
    task: Callable[[Any, Any], R],
    units: Sequence[Unit],
    settings: StageSettings,
    options: RunOptions = RunOptions(),
    reply: Callable[[R], R] | None = None,
    expand: Expand | None = None,
) -> list[R]:
    """Run ``task(unit, settings)`` for every unit not already done; return all results (``settings.RESULT``
    instances, or their ``reply``) sorted by unit_id.

    ``reply`` (a module-level function, applied on the worker): what of each result comes back to the client,
    e.g. only what the client decides on; ``read_unit_result`` reads the whole result where it is needed.
    ``expand`` (module-level): adds to the units what they read from the output folder, in a Dask task per worker
    whose results stay on the workers; the client gets only the fingerprints (the same as if it had added it
    itself), and each batch runs with its load task's units.
    ``options`` (progress, test hooks: ``spare_gen.runner.testhooks``) never change a fingerprint.
    Raises MachineFailure if some units still failed because of the machine after ``MACHINE_RETRIES``.
    """
    stage, out_dir = settings.stage, str(Path(settings.out_dir).resolve())
    workers = worker_count(client)
    plan = _load(client, units, settings, out_dir, expand, workers)
    results = _reused(out_dir, settings, plan, reply)
    todo = {u["unit_id"]: u for u in units if u["unit_id"] not in results}
    if results and todo:
        print(f"spare-gen: {stage}: {len(results)} of {len(units)} units already done, resuming", file=sys.stderr)
    run = _StageRun(client, task, settings, options, reply, plan, todo, results)
    if todo:
        run.run(len(units), workers)
    # what the units wrote into the output folder: the proof that spare_gen wrote it (spare_gen.store.ownership)
    ownership.record(out_dir, [*(rel for res in results.values() for rel in output_files(res.record())),
                               *(_unit_path(out_dir, stage, uid) for uid in results)])  # and the units' own files
    if run.failed_machine:
        raise machine_failure(stage, {uid: res.error for uid, res in run.failed_machine.items()})
    return [cast(R, results[uid]) for uid in sorted(results)]


def status_summary(stage: str, statuses: Iterable[str | None]) -> str:
    """``<stage>: <status> <count>, ...`` of the statuses of a stage's rows, by status name."""
    counts = Counter(statuses)
    return f"{stage}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
