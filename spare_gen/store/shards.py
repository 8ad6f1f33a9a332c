"""Sharded tables: a table is a folder ``<name>.parquet/`` of ``part-<index>-<contents>.parquet`` files.

The stage runner's workers write the parts (``spare_gen.runner.sharded``), so the client never holds a
whole table. Parts are numbered in unit-id order and named also by a hash of what they hold, so a part
is never overwritten by one with other contents while a run is in progress (a resumed or changed run
reads the rows it can reuse from the old parts, then removes them). pyarrow, pandas and Hugging Face
``datasets`` read the folder as one table in part order (``pq.read_table(folder)``,
``pd.read_parquet(folder)``, ``load_dataset("parquet", data_files=f"{folder}/*.parquet")``); files
starting with ``.`` (temporary names) are ignored by all three.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.rows import escaped_text

PART_PREFIX = "part-"
PART_GLOB = f"{PART_PREFIX}*.parquet"
PART_NAME = re.compile(r"part-\d{5}-[0-9a-f]{8}\.parquet")  # what ``part_name`` makes: no other file is read as a part


def rows_to_table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    """Rows (dicts, extra keys ignored, missing keys null) to a table of exactly ``schema``; text Arrow cannot hold
    (the undecodable bytes of a file name) is stored escaped (``rows.escaped_text``)."""
    columns = {f.name: [r.get(f.name) for r in rows] for f in schema}
    try:
        return pa.table(columns, schema=schema)
    except UnicodeEncodeError:  # the rare slow path: every ordinary row is UTF-8 already
        return pa.table({name: escaped_text(values) for name, values in columns.items()}, schema=schema)


def part_name(index: int, contents: str) -> str:
    """``part-00012-<8 hex digits of contents>.parquet``: index for order, hash of what it holds."""
    return f"{PART_PREFIX}{index:05d}-{hashlib.sha256(contents.encode()).hexdigest()[:8]}.parquet"


def parts(table: str | Path) -> list[Path]:
    """The part files of a sharded table, in order (a plain Parquet file is its own single part)."""
    table = Path(table)
    if table.is_file():
        return [table]
    return sorted(p for p in table.glob(PART_GLOB) if PART_NAME.fullmatch(p.name) and _regular(p)) \
        if table.is_dir() else []


def _regular(path: Path) -> bool:
    """A regular file, no link followed: a FIFO or device with a part's name is never opened (it would hang)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def exists(table: str | Path) -> bool:
    return bool(parts(table))


def schema(table: str | Path, default: pa.Schema | None = None) -> pa.Schema:
    """The table's schema (from its first part), or ``default`` if it has no parts."""
    found = parts(table)
    if not found:
        if default is None:
            raise FileNotFoundError(f"{table}: no such table")
        return default
    return pq.read_schema(found[0])


def num_rows(table: str | Path) -> int:
    return sum(pq.read_metadata(p).num_rows for p in parts(table))


def read(table: str | Path, columns: list[str] | None = None, empty: pa.Schema | None = None,
         filters=None) -> pa.Table:
    """The whole table (or ``columns``/``filters`` of it, as ``pq.read_table``); an empty table of ``empty``'s
    schema if it has no parts."""
    found = parts(table)
    if not found:
        if empty is None:
            raise FileNotFoundError(f"{table}: no such table")
        sch = pa.schema([empty.field(c) for c in columns]) if columns else empty
        return sch.empty_table()
    if Path(table).is_dir() and len(found) != len([p for p in Path(table).iterdir() if p.suffix == ".parquet"
                                                  and not p.name.startswith((".", "_"))]):
        # a Parquet file of someone else's in the folder (``part-mine.parquet``): never read as rows of the table
        return pq.read_table([str(p) for p in found], columns=columns, filters=filters)
    return pq.read_table(table if Path(table).is_dir() else found[0], columns=columns, filters=filters)


def iter_parts(table: str | Path, columns: list[str] | None = None):
    """Each part as a table, in order: for a pass over a table that must not hold all of it."""
    for p in parts(table):
        yield p, pq.read_table(p, columns=columns)


def prepare_folder(table: str | Path) -> Path:
    """The table's folder, made if needed; a plain file left by an older version is removed first."""
    table = Path(table)
    if table.is_file() or table.is_symlink():
        table.unlink()
    table.mkdir(parents=True, exist_ok=True)
    return table
