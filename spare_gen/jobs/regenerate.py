"""The main job: regenerate a dataset (models, drawings, question sets, and the corrupted pool if enabled).

``spare-gen run`` runs the enabled stages in order; ``spare-gen pool`` is the same job with the models and
pool stages. Before any work everything the config names is checked (``spare_gen.jobs.preflight``, as ``spare-gen
config`` checks it), and the output folder must be writable and not in use by another run (a lock held for the whole
run). After the stages,
files spare_gen wrote that no table references any more (left by a run with other settings) are removed and listed
(all of them in run.json); a file it did not write, or one changed since it wrote it (``spare_gen.store.ownership``:
path, size and hash), is kept and listed once. An older spare_gen's ledger (paths only) is adopted once, in one line.
dataset.json records every table's hash, and the hash of every other file the run wrote, for ``spare-gen validate``.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from spare_gen.atomic import noting_writes
from spare_gen.card.compose import write_card
from spare_gen.config.schema import Config
from spare_gen.store import ownership
from spare_gen.store.inventory import RUN_FILE, owned, remove_unreferenced
from spare_gen.store.manifest import now, read_manifest, rehash_ledger, stage_summaries, why_incomplete, \
    write_manifest, write_run_record
from spare_gen.stages.models.driver import models_unchanged
from spare_gen.jobs.preflight import preflight, run_names
from spare_gen.store.preflight import LOCK_FILE, check_output_folder, output_lock
from spare_gen.runner.cluster import open_cluster
from spare_gen.runner.stage import MachineFailure
from spare_gen.stage_table import POOL_STAGES, STAGE_NAMES, pool_models_only, wanted

__all__ = ["POOL_STAGES", "STAGE_NAMES", "nothing_to_do", "run"]

SHOWN = 3  # removed files named in the run's line (run.json lists them all)


def say(msg: str) -> None:
    print(f"spare-gen: {msg}", file=sys.stderr)


def run(config: Config, *, stages: tuple[str, ...] = STAGE_NAMES, announce: str = "", client=None) -> dict:
    """Run the enabled stages in order on the configured Dask cluster; return per-stage summaries.

    ``announce`` (e.g. the config it uses) is printed first once the run starts: after the checks that stop it
    with one line (predictions folder, output folder, scheduler). ``client``: a Dask client the caller owns (a
    notebook's, a benchmark's) to run on instead of the configured cluster; it stays open after the run."""
    preflight(config, stages)  # everything the config names, as `spare-gen config` checks it: one line, nothing written
    out = Path(config.out)
    reason = work_reason(config, out, stages)
    if reason is None:
        if announce:
            print(announce, file=sys.stderr)
        if ownership.is_old(out):  # an older spare_gen's output: its ledger hashed once, recorded in dataset.json
            with output_lock(out):
                _adopt(out)
                rehash_ledger(out)
        say(f"nothing to do: {out} is complete for this config")
        return stage_summaries(out)
    created = not out.exists()
    check_output_folder(out)
    said = f"{out}: {reason}: recomputing what that changes, reusing the rest" if read_manifest(out) else ""
    with output_lock(out):  # a second run into ``out`` stops here with one line (exit 2)
        return _run_locked(config, out, stages, announce, client, created, said)


def _run_locked(config: Config, out: Path, stages: tuple[str, ...], announce: str, client, created: bool,
                reason: str = "") -> dict:
    started, t0 = now(), time.monotonic()
    try:
        if client is None:
            client_cm: contextlib.AbstractContextManager = open_cluster(config.runner, shared=out, intro=announce)
        else:
            client_cm = contextlib.nullcontext(client)
            if announce:
                print(announce, file=sys.stderr)
        client = client_cm.__enter__()
    except BaseException:
        if created:  # nothing was written: leave no empty folder behind
            shutil.rmtree(out, ignore_errors=True)
        raise
    if reason:  # an earlier run's output: what changed since, before any stage recomputes
        say(reason)
    summaries = stage_summaries(out)  # keep what earlier runs recorded for stages not run now
    _adopt(out)
    write_manifest(out, config, summaries, complete=False)
    write_run_record(out, config, started, None, None, "running", stages=_names(config, stages))
    outcome, removed = "interrupted", []
    try:
        clock = out / LOCK_FILE
        with ownership.noting_removals() as removed, ownership.noting_kept() as kept, \
                ownership.run_window(out, clock if clock.is_file() else None):
            with contextlib.ExitStack() as stack, noting_writes() as written:
                stack.push(client_cm)
                _run_stages(client, config, out, stages, summaries, written)
                write_card(out, config, client)  # once, from every stage's outputs (questions, audit, pool)
            changed = _clean_up(out, written, removed, kept)
        write_manifest(out, config, summaries, complete=True, mine=owned(out) - changed)  # not a changed file's hash
        outcome = "complete"
    except BaseException as exc:
        outcome = f"stopped: {type(exc).__name__}"
        raise
    finally:
        _record_run(out, config, started, round(time.monotonic() - t0, 3), outcome, _names(config, stages), removed)
    say(f"done in {time.monotonic() - t0:.1f} s; output in {out}")
    return summaries


def _clean_up(out: Path, written: list[str], removed: list[str], kept: list[str]) -> set[str]:
    """Remove the files spare_gen wrote that no table names any more and that still hold the bytes it wrote (never
    one this run wrote, nor one a table of any stage still names), record what it owns now, and say what went (the
    stages' removals too: a task no longer asked for) and what is not its own or was changed since (kept); return
    the files spare_gen recorded that changed since (dataset.json records no hash of theirs)."""
    ours = ownership.relative(out, written)
    ownership.record(out, ours)  # the card, previews, reports: written by this process
    ownership.record(out, owned(out))  # the tables and every file they name, as spare_gen wrote them this run
    remove_unreferenced(out, keep=ours)  # adds to ``removed`` (ownership.noting_removals)
    if removed:
        say(f"removed {len(removed)} file(s) spare_gen wrote that no table names any more (left by an earlier run "
            f"with other settings; all listed in {RUN_FILE}), e.g. {', '.join(removed[:SHOWN])}")
    ownership.record(out, (), prune=True)
    foreign, changed = ownership.not_ours(out)
    others = sorted({*foreign, *changed, *kept} - set(removed))
    if others:
        say(f"{len(others)} file(s) in {out} are not spare_gen's or were changed: kept (e.g. {others[0]}); "
            "`spare-gen validate` lists them all")
    return set(changed)


def _adopt(out: Path) -> None:
    """An older spare_gen's ledger (paths only): its files hashed once as they are, said in one line."""
    n = ownership.adopt(out)
    if n:
        say(f"adopted {n} file(s) an older spare_gen recorded as its own in {out / ownership.LEDGER}: hashed once "
            "as they are now (from now on a file changed since is kept and listed, never removed)")


def _record_run(out: Path, config: Config, started: str, seconds: float, outcome: str,
                stages: tuple[str, ...], removed: Sequence[str] = ()) -> None:
    """run.json, best effort: after a failure (a full disk, say) a failed write must not replace that failure's
    one line and exit code; after a complete run it is a machine failure (the run is not recorded complete)."""
    try:
        write_run_record(out, config, started, now(), seconds, outcome, stages=stages, removed=list(removed))
    except OSError as exc:
        if outcome == "complete":
            raise MachineFailure(f"the run finished but its record {out / RUN_FILE} could not be written "
                                 f"({exc.strerror or exc}); rerun the same command to finish") from None


def nothing_to_do(config: Config, out: Path, stages: tuple[str, ...]) -> bool:
    """A complete output of this config, tables and files intact, inputs unchanged: no stage would do work."""
    return work_reason(config, out, stages) is None


def work_reason(config: Config, out: Path, stages: tuple[str, ...]) -> str | None:
    """Why a run of ``stages`` into ``out`` has work to do (what changed since the last run), or None: nothing.

    Test hooks and a predictions folder (inputs whose content is not recorded) always run the stages.
    """
    if any(v for v in config.debug.model_dump().values() if isinstance(v, list)):
        return "test hooks are set"
    if config.pool.predictions:
        return f"pool.predictions {config.pool.predictions} is read again"
    reason = why_incomplete(out, config, _names(config, stages))
    if reason is None and not models_unchanged(config, out, pool_models_only(config, stages)):
        reason = "the input models changed"
    return reason


def _names(config: Config, stages: tuple[str, ...]) -> tuple[str, ...]:
    """The requested stages the config enables (``_run_stages`` runs exactly these, and the steps that follow them)."""
    return run_names(config, stages)


def _run_stages(client, config: Config, out: Path, stages: tuple[str, ...], summaries: dict,
                written: list[str]) -> None:
    """Each stage in order; after each, what this process wrote goes to the ownership ledger (a later run that
    finds it interrupted can still prove those files its own)."""
    for stage in wanted(config, stages):
        summary = stage.run(client, config, out, stages)
        summaries[summary.stage] = summary.text
        say(summary.text)
        ownership.record(out, written)
        write_manifest(out, config, summaries, complete=False)
