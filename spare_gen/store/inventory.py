"""What a dataset folder holds: its tables, the files they reference, and files nothing references.

One rule, used by the manifest, ``validate`` and the clean-up after a run: a Parquet column names files
when its name is ``path``, ``svg``, ``png`` or ends with ``_path``, ``_svg``, ``_png``, ``_step``,
``_json``; the file's SHA-256, when the table keeps it, is in ``sha256`` (for ``path``) or
``<name without _path>_sha256``. A drawing packed into the views table (``render.store = "parquet"``,
``spare_gen.store.packed``) is named the same way but is no file: its bytes are checked in the table. Bookkeeping (``.units/``, ``timings/``, ``run.json``) is not part of a dataset; ``reports/`` holds analyses made
from it later (audit, metric report, rankings), which are not its tables.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Collection, Iterator

import pyarrow.parquet as pq

from spare_gen.console import progress
from spare_gen.filehash import sha256_file
from spare_gen.store import ownership
from spare_gen.stage_table import STAGE_FOLDERS
from spare_gen.store.packed import packed_bytes, packed_paths

MANIFEST_FILE = "dataset.json"
RUN_FILE = "run.json"
BOOKKEEPING = (".units", "timings", RUN_FILE)  # resume state and timings: not dataset content
REPORTS_DIR = "reports"  # analyses made from a dataset later (audit, metric report, rankings): not its tables
FILE_COLUMN_NAMES = ("path", "svg", "png")
FILE_COLUMN_SUFFIXES = ("_path", "_svg", "_png", "_step", "_json")
# Folders whose files exist only because a table references them, the stages' (spare_gen.stage_table): a file
# spare_gen wrote there that no table names is stale (removed after a run); a file it did not write is kept, wherever
# it is.
MANAGED_DIRS = STAGE_FOLDERS
# Folders that commands run on a finished dataset write into (reports, rater answers, HTML pages, exports): not the
# run's, so neither checked by validate nor listed as not spare_gen's (reports/audit.json, written by the run, is).
LATER_DIRS = (REPORTS_DIR, "annotations", "show", "exports")


def _is_bookkeeping(rel: str) -> bool:
    first = rel.split("/", 1)[0]
    return first in BOOKKEEPING or rel.endswith("/timings.json") or "/." in f"/{rel}"


def dataset_files(out: Path) -> Iterator[str]:
    """Every file of the dataset (relative POSIX paths, sorted), bookkeeping and temporary files left out."""
    out = Path(out)
    found = []
    for root, dirs, files in os.walk(out):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        folder = Path(root).relative_to(out).as_posix()  # strings per file: a dataset has ~25 files per model
        prefix = "" if folder == "." else f"{folder}/"
        for name in files:
            if name.startswith("."):
                continue
            rel = prefix + name
            if not _is_bookkeeping(rel):
                found.append(rel)
    yield from sorted(found)


def tables(out: Path) -> list[str]:
    """The dataset's Parquet tables (relative paths, sorted): its data, recorded in dataset.json by hash."""
    return [rel for rel in dataset_files(out) if rel.endswith(".parquet") and not rel.startswith(f"{REPORTS_DIR}/")]


def is_file_column(name: str) -> bool:
    return name in FILE_COLUMN_NAMES or name.endswith(FILE_COLUMN_SUFFIXES)


def hash_column(name: str) -> str:
    return "sha256" if name == "path" else f"{name.removesuffix('_path')}_sha256"


def references(out: Path, table: str) -> Iterator[tuple[str, str | None, str]]:
    """(referenced path, its recorded sha256 or None, column) for every file a Parquet table names."""
    schema = pq.read_schema(Path(out) / table)
    columns = [n for n in schema.names if is_file_column(n)]
    if not columns:
        return
    hashes = {c: hash_column(c) for c in columns if hash_column(c) in schema.names}
    data = pq.read_table(Path(out) / table, columns=columns + sorted(set(hashes.values())))
    for column in columns:
        values = data.column(column).to_pylist()
        sums = data.column(hashes[column]).to_pylist() if column in hashes else [None] * len(values)
        for value, digest in zip(values, sums):
            for path in value if isinstance(value, list) else [value]:
                if isinstance(path, str) and path and not path.startswith(("/", "http")):
                    yield path, (digest if not isinstance(value, list) else None), f"{table}:{column}"


def referenced_files(out: Path) -> dict[str, tuple[str | None, str]]:
    """{path: (sha256 or None, first table:column naming it)} over every Parquet table of the dataset."""
    refs: dict[str, tuple[str | None, str]] = {}
    for table in tables(out):
        if table.endswith(".parquet"):
            for path, digest, where in references(out, table):
                if path not in refs or (refs[path][0] is None and digest):
                    refs[path] = (digest, where)
    return refs


def table_hashes(out: Path) -> dict[str, str]:
    return {rel: sha256_file(Path(out) / rel) for rel in tables(out)}


def in_later_dir(rel: str) -> bool:
    return rel.split("/", 1)[0] in LATER_DIRS


def owned(out: Path, ledger: set[str] | None = None) -> set[str]:
    """The files of ``out`` that are spare_gen's: the tables, every file a table names, dataset.json and what the
    ownership ledger records (``spare_gen.store.ownership``)."""
    return ({*tables(out), *referenced_files(out), MANIFEST_FILE}
            | (ownership.read(out) if ledger is None else ledger))


def foreign(out: Path, mine: set[str]) -> list[str]:
    """The dataset files of ``out`` (bookkeeping aside) that are not in ``mine`` and not in the folders later
    commands write (``LATER_DIRS``): not spare_gen's, never removed."""
    return [rel for rel in dataset_files(out) if rel not in mine and not in_later_dir(rel)]


def unreferenced(out: Path) -> list[str]:
    """Files in MANAGED_DIRS that spare_gen wrote (the ownership ledger names them) but no table references any
    more and that are not tables themselves (left by other runs); a file no record names is never listed.

    A file at the path of a packed drawing is stale too: the table holds that drawing's bytes."""
    named = set(referenced_files(out)) - packed_paths(out)
    mine = ownership.read(out)
    return [rel for rel in dataset_files(out)
            if rel.split("/", 1)[0] in MANAGED_DIRS and rel in mine and rel not in named
            and not rel.endswith((".parquet", ".json", ".md", ".csv"))]


def remove_unreferenced(out: Path, keep: Collection[str] = frozenset()) -> list[str]:
    """Delete the files ``unreferenced`` lists (``keep`` aside: what this run wrote), then folders they leave
    empty; return them."""
    return ownership.remove(out, [rel for rel in unreferenced(out) if rel not in keep])


def unrecorded_hashes(out: Path, mine: set[str]) -> dict[str, str]:
    """{path: sha256} of every file of ``mine`` present in ``out`` that no table hash covers: not a table, not
    named by a table with its hash (pool pictures, preview sheets, the card, the audit report). dataset.json
    records them (``files``) for validate."""
    refs = referenced_files(out)
    covered = {*tables(out), MANIFEST_FILE, *(rel for rel, (digest, _) in refs.items() if digest)}
    return {rel: sha256_file(Path(out) / rel) for rel in dataset_files(out)
            if rel in mine and rel not in covered}


def check(out: Path, recorded: dict[str, str], show: bool = False, files: dict[str, str] | None = None) -> list[str]:
    """Problems: a table changed since the run recorded it, a referenced file (or packed drawing) missing or
    changed, a file ``files`` records (dataset.json's hashes of the files no table hashes) missing or changed,
    and every file that is none of these (not spare_gen's: listed, never removed). ``files`` None: the tables and
    the files they name only. ``show``: progress per file on stderr (a bar on a terminal, periodic lines in a log)."""
    out = Path(out)
    problems = []
    present = set(tables(out))
    for rel, digest in sorted(recorded.items()):
        if rel not in present:
            problems.append(f"files: table {rel} is listed in {MANIFEST_FILE} but missing")
        elif sha256_file(out / rel) != digest:
            problems.append(f"files: table {rel} changed since the run wrote it (sha256 differs from {MANIFEST_FILE})")
    for rel in sorted(present - set(recorded)):
        problems.append(f"files: table {rel} is not listed in {MANIFEST_FILE}")
    packed = packed_paths(out)
    named = sorted(referenced_files(out).items())
    bar = progress(len(named), "validate", "file", show)
    for rel, (named_digest, where) in named:
        bar.update(1)
        full = out / rel
        if rel in packed:
            data = packed_bytes(out, rel)
            if data is None:
                problems.append(f"files: {rel} (named in {where}) is packed in the views table without its bytes")
            elif named_digest and hashlib.sha256(data).hexdigest() != named_digest:
                problems.append(f"files: {rel} (named in {where}) changed: sha256 of its packed bytes differs "
                                "from the table")
        elif not full.is_file():
            problems.append(f"files: {rel} (named in {where}) does not exist")
        elif named_digest and sha256_file(full) != named_digest:
            problems.append(f"files: {rel} (named in {where}) changed: sha256 differs from the table")
    bar.close()
    if files is None:  # the tables and what they name only
        return problems
    for rel, digest in sorted(files.items()):
        full = out / rel
        if not full.is_file():
            problems.append(f"files: {rel} (recorded in {MANIFEST_FILE}) does not exist")
        elif sha256_file(full) != digest:
            problems.append(f"files: {rel} changed: sha256 differs from {MANIFEST_FILE}")
    for rel in foreign(out, {*present, *recorded, *dict(named), *files, MANIFEST_FILE}):
        problems.append(f"stray: {rel} is not spare_gen's: no table names it and {MANIFEST_FILE} does not record "
                        "it (kept; remove it or move it out of the dataset)")
    return problems
