"""Answer-side files named by their content, so no path, file name or file order tells the answer (issue 15).

A pose drawing is ``drawings/<model>/<pose>.png``: its name is the pose. A question's answer-side drawings
(pose tasks) are therefore byte copies under ``questions/<task>/files/<sha256 prefix>.<ext>``, with the
source of each copy in ``questions/file_sources.parquet``; cut objects are content-named where they are
written. Every such file gets one fixed modification time, so the write order (which follows the
answer order) cannot be read from the file system either.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyarrow as pa

from spare_gen.atomic import write_bytes
from spare_gen.packed import drawing_bytes
from spare_gen.questions.columns import PATHS, field
from spare_gen.questions.outputs import question_files_dir

NAME_HEX = 32  # hex digits of the SHA-256 in a file name (128 bits)
FIXED_MTIME = 946684800  # 2000-01-01T00:00:00Z for every content-named file
FILE_SOURCES_SCHEMA = pa.schema([
    field("path", pa.string(), f"a per-question copy ({PATHS})"),
    field("source", pa.string(), "the drawing-stage file it copies (its name says the pose)"),
])


def content_name(data: bytes, suffix: str, salt: str = "") -> str:
    """``<first NAME_HEX hex digits of SHA-256(salt + data)><suffix>``; a salt keeps equal drawings of two
    views apart (it must never depend on the answer)."""
    return hashlib.sha256(salt.encode() + data).hexdigest()[:NAME_HEX] + suffix


def settle(path: Path) -> None:
    """Give ``path`` the fixed modification time."""
    os.utime(path, (FIXED_MTIME, FIXED_MTIME))


def copy_to_content_name(out: Path, rel: str, folder: str) -> str:
    """Copy ``out/rel`` (a file, or a drawing packed in the views table) atomically to its content name inside
    ``folder``; the new path."""
    data = drawing_bytes(out, rel)
    new_rel = f"{folder}/{content_name(data, Path(rel).suffix)}"
    target = Path(out) / new_rel
    if not (target.is_file() and target.read_bytes() == data):
        write_bytes(target, data)
    settle(target)
    return new_rel


def publish_answer_files(out: Path, task: str, rows: list[dict], columns: tuple[str, ...],
                         sources: dict[str, str]) -> list[dict]:
    """``rows`` with every path in ``columns`` (single paths or lists) replaced by a content-named copy.

    ``sources`` (copy -> original) is filled in place.
    """
    folder = question_files_dir(task)

    def copy(rel):
        if rel is None:
            return None
        new_rel = copy_to_content_name(out, rel, folder)
        sources[new_rel] = rel
        return new_rel

    published = []
    for row in rows:
        row = dict(row)
        for col in columns:
            value = row.get(col)
            row[col] = [copy(p) for p in value] if isinstance(value, (list, tuple)) else copy(value)
        published.append(row)
    return published


def remove_unlisted(out: Path, task: str, keep: set[str]) -> None:
    """Delete files of the task's copy folder that no question names (left by an earlier run)."""
    folder = Path(out) / question_files_dir(task)
    if folder.is_dir():
        for path in folder.iterdir():
            if f"{question_files_dir(task)}/{path.name}" not in keep:
                path.unlink()
