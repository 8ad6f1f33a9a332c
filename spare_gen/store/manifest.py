"""The dataset's own record (dataset.json, deterministic) and the run's record (run.json, times and place).

``dataset.json`` holds what decides the dataset's bytes: the config less where and how it ran, the
versions of every package that shapes output, the stage summaries, the SHA-256 of every table and of every other
file the run wrote that no table hashes (``files``: the card, preview sheets, pool pictures, the audit report). Two
runs of one config give the same dataset.json. Where, when, on how many workers and how long go to
``run.json``, which is bookkeeping, like ``.units/`` and ``timings/``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import stat
from collections.abc import Collection, Sequence
from pathlib import Path

from spare_gen.atomic import write_json
from spare_gen.config.schema import Config
from spare_gen.filehash import sha256_file
from spare_gen.store import ownership
from spare_gen.store.inventory import (MANIFEST_FILE, RUN_FILE, is_bookkeeping, referenced_files, table_hashes,
                                         unrecorded_hashes)
from spare_gen.store.packed import packed_paths
from spare_gen.versions import package_versions, version_changes

# Config keys that say where and how a run happened, not what it produced.
RUN_ONLY_KEYS = ("out",)
RUN_ONLY_RUNNER_KEYS = ("cluster", "scheduler", "jobqueue", "workers", "progress", "dashboard")
# dataset.json's key holding the SHA-256 of all its other keys (config, seed, versions, stages, tables): validate
# recomputes it, so an edited seed, citation or version is caught as an edited table is
PROVENANCE_KEY = "provenance_sha256"
# dataset.json's key holding the digest of the ownership ledger (.units/written.json): an edit to it is caught
LEDGER_KEY = "ledger_sha256"
MANIFEST_MAX_BYTES = 1 << 30  # a dataset.json larger than this is none of spare_gen's: not read


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def dataset_config(config: Config) -> dict:
    """The config as it decides the output (``out`` and the runner's placement settings left out)."""
    data = config.model_dump(mode="json")
    for key in RUN_ONLY_KEYS:
        data.pop(key, None)
    for key in RUN_ONLY_RUNNER_KEYS:
        data["runner"].pop(key, None)
    if not any(v for v in data.get("debug", {}).values() if isinstance(v, list)):  # test hooks are recorded only when some are set
        data.pop("debug", None)
    return data


def read_manifest(out: Path) -> dict:
    path = Path(out) / MANIFEST_FILE
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MANIFEST_MAX_BYTES:  # checked before it is opened
            return {}
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def stage_summaries(out: Path) -> dict:
    """Summaries recorded by earlier runs into ``out`` (a run of some stages keeps the others')."""
    return dict(read_manifest(out).get("stages", {}))


SHOWN_CHANGES = 3  # changed settings named in the line that says why a run recomputes


def why_incomplete(out: Path, config: Config, stages: tuple[str, ...]) -> str | None:
    """Why the last run into ``out`` did not complete ``stages`` with ``config``, in a few words (what changed since:
    a package version, a setting, a table, a file; or how the last run ended), or None when it did: the same
    output-deciding config and package versions (``spare_gen.versions.output_versions``: dask's is not one), its
    tables unchanged since, and every file they name present. (Inputs outside ``out``, such as CAD files, are the
    caller's to compare.)"""
    record = read_manifest(out)
    try:
        last = json.loads((Path(out) / RUN_FILE).read_text())
    except (OSError, json.JSONDecodeError):
        return "no run has finished into it yet"
    if last.get("outcome") != "complete" or not record.get("complete"):
        return f"its last run did not finish ({last.get('outcome', 'no outcome recorded')})"
    changed = version_changes(record.get("versions", {}), package_versions())
    if changed:
        return ", ".join(changed)
    settings = _changed_settings(record.get("config", {}), dataset_config(config))
    if settings:
        more = f" and {len(settings) - SHOWN_CHANGES} more" if len(settings) > SHOWN_CHANGES else ""
        return "settings changed: " + ", ".join(settings[:SHOWN_CHANGES]) + more
    missing_stages = [s for s in stages if s not in last.get("stages", ())]  # summaries may be older runs'
    if missing_stages:
        return f"its last run did not run {', '.join(missing_stages)}"
    tables, current = record.get("tables", {}), table_hashes(Path(out))
    edited = sorted(k for k in set(tables) | set(current) if tables.get(k) != current.get(k))
    if edited:
        return f"a table changed since the last run ({', '.join(edited[:SHOWN_CHANGES])})"
    gone = [rel for rel in record.get("files", {}) if not (Path(out) / rel).is_file()]  # e.g. a deleted card
    packed = packed_paths(Path(out))
    gone += [rel for rel in referenced_files(Path(out)) if rel not in packed and not (Path(out) / rel).is_file()]
    if gone:
        return f"{len(gone)} file(s) it wrote are missing (e.g. {gone[0]})"
    return None


def _changed_settings(before: dict, now: dict, prefix: str = "") -> list[str]:
    """``key old -> new`` for every dotted config key whose value differs (a key only one side has: ``none``)."""
    out = []
    for key in sorted(set(before) | set(now)):
        a, b = before.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _changed_settings(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key} {json.dumps(a) if key in before else 'none'} -> "
                       f"{json.dumps(b) if key in now else 'none'}")
    return out


def write_manifest(out: Path, config: Config, stages: dict, complete: bool,
                   mine: Collection[str] = frozenset()) -> Path:
    """dataset.json: config, versions, stage summaries and, once the run is complete, every table's hash and the
    hash of every file of ``mine`` (the files the run can prove it wrote) that no table hashes."""
    record = {
        "config": dataset_config(config),
        "seed": config.seed,
        "versions": package_versions(),
        "stages": dict(sorted(stages.items())),
        "complete": complete,
        "tables": table_hashes(Path(out)) if complete else {},
        "files": unrecorded_hashes(Path(out), set(mine)) if complete else {},
        LEDGER_KEY: ledger_digest(Path(out)) if complete else "",
    }
    return write_json(Path(out) / MANIFEST_FILE, {**record, PROVENANCE_KEY: provenance_hash(record)})


def rehash_files(out: Path, rels: list[str]) -> None:
    """After a command rewrote files a complete run recorded (``spare-gen audit``: the card and reports/audit.json),
    record their new hashes in dataset.json (its provenance hash with them); nothing for an incomplete record."""
    record = read_manifest(out)
    if not record.get("complete") or "files" not in record:
        return
    files = dict(record["files"])
    for rel in rels:
        if (Path(out) / rel).is_file():
            files[rel] = sha256_file(Path(out) / rel)
    record = {k: v for k, v in record.items() if k != PROVENANCE_KEY}
    record["files"] = dict(sorted(files.items()))
    if LEDGER_KEY in record:
        record[LEDGER_KEY] = ledger_digest(Path(out))
    write_json(Path(out) / MANIFEST_FILE, {**record, PROVENANCE_KEY: provenance_hash(record)})


def ledger_digest(out: Path) -> str:
    """The digest of the ownership ledger that dataset.json records (``ownership.digest``: bookkeeping's bytes
    aside, so two runs of one config record the same)."""
    return ownership.digest(out, is_bookkeeping)


def rehash_ledger(out: str | os.PathLike, rels: Collection[str] = ()) -> None:
    """After a command added what it wrote (``rels``) to the ownership ledger (``ownership.recording``),
    dataset.json's record of the ledger, and the new hash of each of ``rels`` it records in ``files`` (its provenance
    hash with them); nothing for an incomplete record."""
    record = read_manifest(Path(out))
    if not record.get("complete"):
        return
    record = {k: v for k, v in record.items() if k != PROVENANCE_KEY}
    record[LEDGER_KEY] = ledger_digest(Path(out))
    files = dict(record.get("files", {}))
    for rel in set(rels) & set(files):
        if (Path(out) / rel).is_file():
            files[rel] = sha256_file(Path(out) / rel)
    if "files" in record:
        record["files"] = dict(sorted(files.items()))
    write_json(Path(out) / MANIFEST_FILE, {**record, PROVENANCE_KEY: provenance_hash(record)})


def provenance_hash(record: dict) -> str:
    """SHA-256 of dataset.json's keys other than PROVENANCE_KEY, as canonical JSON (sorted keys, no spaces)."""
    data = {k: v for k, v in record.items() if k != PROVENANCE_KEY}
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write_run_record(out: Path, config: Config, started: str, finished: str | None, seconds: float | None,
                     outcome: str, workers: int | None = None, stages: tuple[str, ...] = (),
                     removed: Sequence[str] = ()) -> Path:
    """run.json; ``stages``: the stages this run ran (their summaries in dataset.json may be older runs');
    ``removed``: every file the run's clean-up removed."""
    return write_json(Path(out) / RUN_FILE, {
        "out": str(Path(out).resolve()),
        "runner": config.runner.model_dump(mode="json"),
        "workers": workers,
        "host": platform.node(),
        "started": started,
        "finished": finished,
        "seconds": seconds,
        "outcome": outcome,
        "stages": list(stages),
        "removed": list(removed),
    })
