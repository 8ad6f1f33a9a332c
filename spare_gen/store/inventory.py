"""What a dataset folder holds: its tables, the files they reference, and files nothing references.

One rule, used by the manifest, ``validate`` and the clean-up after a run: a Parquet column names files
when its name is ``path``, ``svg``, ``png`` or ends with ``_path``, ``_svg``, ``_png``, ``_step``,
``_json``; the file's SHA-256, when the table keeps it, is in ``sha256`` (for ``path``) or
``<name without _path>_sha256``. A drawing packed into the views table (``render.store = "parquet"``,
``spare_gen.store.packed``) is named the same way but is no file: its bytes are checked in the table. Bookkeeping (``.units/``, ``timings/``, ``run.json``) is not part of a dataset; ``reports/`` holds analyses made
from it later (audit, metric report, rankings), which are not its tables.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
from pathlib import Path
from typing import Collection, Iterator

import pyarrow.parquet as pq

from spare_gen.console import progress
from spare_gen.filehash import sha256_file
from spare_gen.store import ownership
from spare_gen.stage_table import STAGE_FOLDERS
from spare_gen.store.packed import packed_bytes, packed_paths
from spare_gen.store.shards import PART_PREFIX

# Where spare_gen's layout puts a table: a Parquet file anywhere else (a user's) is never read as one. A table is a
# file at one of these paths, or a folder of parts there whose parts the ownership ledger names.
TABLE_NAMES = ("models.parquet", "views.parquet", "drawings.parquet", "wireframes.parquet", "corruptions.parquet",
               "pairs.parquet")
QUESTION_TABLE_DEPTHS = (2, 3)  # questions/<name>.parquet, questions/<task>/<split>.parquet
HF_DIR = "hf"  # hf/<task>/<split>.parquet: the Hugging Face copies (spare_gen.hub.pack)
# Folders that hold people's own data by design: raters' answers (``spare-gen annotate``, ``spare-gen quiz``).
# validate checks there what spare_gen's apps wrote (the ledger) and lists the rest as people's data, not a problem.
PEOPLES_DATA = ("annotations/*.csv", "quiz/*/answers/*.csv")

MANIFEST_FILE = "dataset.json"
RUN_FILE = "run.json"
BOOKKEEPING = (".units", "timings", RUN_FILE)  # resume state and timings: not dataset content
REPORTS_DIR = "reports"  # analyses made from a dataset later (audit, metric report, rankings): not its tables
FILE_COLUMN_NAMES = ("path", "svg", "png")
PARQUET_MIN_BYTES = 12  # "PAR1", a footer length, "PAR1": the least a Parquet file holds
FILE_COLUMN_SUFFIXES = ("_path", "_svg", "_png", "_step", "_json")
# Folders whose files exist only because a table references them, the stages' (spare_gen.stage_table): a file
# spare_gen wrote there that no table names is stale (removed after a run); a file it did not write is kept, wherever
# it is.
MANAGED_DIRS = STAGE_FOLDERS


def is_bookkeeping(rel: str) -> bool:
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
            if not is_bookkeeping(rel):
                found.append(rel)
    yield from sorted(found)


def in_table_layout(rel: str) -> bool:
    """True if ``rel`` is where spare_gen's layout puts a single-file table."""
    parts = rel.split("/")
    if not rel.endswith(".parquet") or any(p.startswith(".") for p in parts):
        return False
    return rel in TABLE_NAMES or (parts[0] == "questions" and len(parts) in QUESTION_TABLE_DEPTHS) \
        or (parts[0] == HF_DIR and len(parts) == 3)


def tables(out: Path, ledger: Collection[str] | None = None) -> list[str]:
    """The dataset's Parquet tables (relative paths, sorted; a folder table's parts one by one): its data, recorded
    in dataset.json by hash. Only where spare_gen's layout puts a table (``in_table_layout``), and a folder table's
    parts only when the ownership ledger names them (``ledger``: its paths, read if None): a user's Parquet file is
    never read as a table."""
    mine = ownership.read(out) if ledger is None else ledger
    found = []
    for rel in dataset_files(out):
        if not rel.endswith(".parquet"):
            continue
        folder, _, name = rel.rpartition("/")
        if (in_table_layout(rel) or (in_table_layout(folder) and rel in mine and name.startswith(PART_PREFIX))) \
                and regular(out, rel) is not None:
            found.append(rel)
    return found


def is_peoples_data(rel: str) -> bool:
    """True for a file in a folder that holds people's own data by design (``PEOPLES_DATA``)."""
    return any(fnmatch.fnmatchcase(rel, pattern) and rel.count("/") == pattern.count("/") for pattern in PEOPLES_DATA)


def regular(out: Path, rel: str) -> os.stat_result | None:
    """The file's own status if ``rel`` is a regular file (no link followed), else None: a FIFO, socket, device,
    folder or link is never opened."""
    try:
        st = os.lstat(os.path.join(out, rel))
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def is_file_column(name: str) -> bool:
    return name in FILE_COLUMN_NAMES or name.endswith(FILE_COLUMN_SUFFIXES)


def hash_column(name: str) -> str:
    return "sha256" if name == "path" else f"{name.removesuffix('_path')}_sha256"


def references(out: Path, table: str) -> Iterator[tuple[str, str | None, str]]:
    """(referenced path, its recorded sha256 or None, column) for every file a Parquet table names."""
    st = regular(Path(out), table)
    if st is None or st.st_size < PARQUET_MIN_BYTES:  # checked before it is opened: never a FIFO, never a stub
        raise ValueError(f"{table}: not a Parquet file ({'not a regular file' if st is None else f'{st.st_size} bytes'})")
    try:
        schema = pq.read_schema(Path(out) / table)
        columns = [n for n in schema.names if is_file_column(n)]
        if not columns:
            return
        hashes = {c: hash_column(c) for c in columns if hash_column(c) in schema.names}
        data = pq.read_table(Path(out) / table, columns=columns + sorted(set(hashes.values())))
    except (OSError, ValueError) as exc:  # pyarrow's errors name no file
        raise ValueError(f"{table}: not a readable Parquet file ({exc})") from None
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


def owned(out: Path, ledger: set[str] | None = None) -> set[str]:
    """The files of ``out`` that are spare_gen's: the tables, every file a table names, dataset.json and what the
    ownership ledger records (``spare_gen.store.ownership``)."""
    ledger = ownership.read(out) if ledger is None else ledger
    return {*tables(out, ledger), *referenced_files(out), MANIFEST_FILE} | ledger


def unreferenced(out: Path) -> list[str]:
    """Files in MANAGED_DIRS that spare_gen wrote (the ownership ledger names them) but no table references any
    more and that are not tables themselves (left by other runs); a file no record names is never listed (and
    ``ownership.remove`` removes only the ones that still hold spare_gen's bytes).

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
            if rel in mine and rel not in covered and regular(out, rel) is not None}


def _not_a_file(out: Path, rel: str) -> str | None:
    """What ``rel`` is when it exists but is no regular file ("a FIFO", "a symbolic link" ...), else None."""
    try:
        return ownership.kind(os.lstat(out / rel).st_mode) if regular(out, rel) is None else None
    except OSError:
        return None


def check(out: Path, recorded: dict[str, str], show: bool = False, files: dict[str, str] | None = None) -> list[str]:
    """Problems: a table changed since the run recorded it, a referenced file (or packed drawing) missing or
    changed, a file ``files`` records (dataset.json's hashes of the files no table hashes) missing or changed, a
    file the ownership ledger records that changed or is gone, and every entry of the folder that is none of these
    (not spare_gen's, dot files and special files included: listed, never opened, never removed), people's data by
    design aside (``is_peoples_data``). ``files`` None: the tables and the files they name only. ``show``: progress
    per file on stderr (a bar on a terminal, periodic lines in a log)."""
    out = Path(out)
    problems = []
    present = set(tables(out))
    for rel, digest in sorted(recorded.items()):
        if rel not in present:
            what = _not_a_file(out, rel)
            problems.append(f"files: table {rel} is listed in {MANIFEST_FILE} but "
                            + (f"is {what} (never opened)" if what else "missing"))
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
        elif not full.is_file() or not stat.S_ISREG(full.stat().st_mode):
            what = _not_a_file(out, rel)
            problems.append(f"files: {rel} (named in {where}) " + (f"is {what}, not a file (never opened)"
                                                                   if what else "does not exist"))
        elif named_digest and sha256_file(full) != named_digest:
            problems.append(f"files: {rel} (named in {where}) changed: sha256 differs from the table")
    bar.close()
    if files is None:  # the tables and what they name only
        return problems
    for rel, digest in sorted(files.items()):
        if regular(out, rel) is None:
            what = _not_a_file(out, rel)
            problems.append(f"files: {rel} (recorded in {MANIFEST_FILE}) " + (f"is {what} (never opened)"
                                                                              if what else "does not exist"))
        elif sha256_file(out / rel) != digest:
            problems.append(f"files: {rel} changed: sha256 differs from {MANIFEST_FILE}")
    covered = {*present, *recorded, *dict(named), *files, MANIFEST_FILE}
    hashed = {*present, *recorded, *(rel for rel, (digest, _) in named if digest), *files}  # checked above
    ledger = ownership.entries(out)
    others, changed = ownership.not_ours(out, hash_all_but=hashed)  # every byte checked, once
    others = [rel for rel in others if rel not in covered]
    for rel in (rel for rel in changed if rel not in hashed):
        what = _not_a_file(out, rel)
        problems.append(f"files: {rel} " + (f"is {what} now (never opened)" if what else "changed since spare_gen "
                                            f"wrote it (size or sha256 differs from {ownership.LEDGER}): kept"))
    for rel in sorted(set(ledger) - covered):
        if not os.path.lexists(out / rel):
            problems.append(f"files: {rel} (recorded in {ownership.LEDGER}) does not exist")
    for rel in others:
        if is_peoples_data(rel) and regular(out, rel) is not None:
            continue
        what = _not_a_file(out, rel)
        problems.append(f"stray: {rel} is not spare_gen's: " + (f"it is {what} (never opened; " if what else
                        f"no table names it and {MANIFEST_FILE} does not record it (") + "kept; remove it or move "
                        "it out of the dataset)")
    return problems


def peoples_data(out: Path) -> list[str]:
    """The files of ``out`` that are people's own data by design (raters' answers) and not spare_gen's."""
    others, _ = ownership.not_ours(out)
    return [rel for rel in others if is_peoples_data(rel) and regular(out, rel) is not None]
