"""Files referenced by questions: collecting their paths from rows, hashing them, the manifest table."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

import pyarrow as pa

from spare_gen.filehash import sha256_file
from spare_gen.packed import packed_bytes
from spare_gen.shards import rows_to_table
from spare_gen.questions.schema import MANIFEST_SCHEMA, path_columns


def row_paths(row: dict, task) -> list[str]:
    """Every file path a question row names, in column order."""
    paths: list[str] = []
    for col in path_columns(task):
        value = row.get(col)
        if value is None:
            continue
        paths.extend(value if isinstance(value, (list, tuple)) else [value])
    return paths


def dataset_sha256(out: Path, rel: str) -> str | None:
    """SHA-256 of ``rel`` under ``out``: a drawing packed in the views table, else the file; None if neither."""
    packed = packed_bytes(out, rel)
    if packed is not None:
        return hashlib.sha256(packed).hexdigest()
    full = Path(out) / rel
    return sha256_file(full) if full.is_file() else None


def manifest_table(out: Path, paths: Iterable[str]) -> pa.Table:
    """(path, sha256, bytes) of each distinct path, sorted by path."""
    rows = []
    for rel in sorted(set(paths)):
        full = out / rel
        packed = packed_bytes(out, rel)  # a drawing in the views table (render.store = "parquet")
        if packed is not None:
            rows.append({"path": rel, "sha256": hashlib.sha256(packed).hexdigest(), "bytes": len(packed)})
            continue
        if not full.is_file():
            raise FileNotFoundError(f"a question references {rel!r}, which does not exist under {out}")
        rows.append({"path": rel, "sha256": sha256_file(full), "bytes": full.stat().st_size})
    return rows_to_table(rows, MANIFEST_SCHEMA)
