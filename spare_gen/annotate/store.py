"""The per-rater answers file: one CSV row appended and fsync'ed per answer, read back to resume.

Columns are ``ANSWER_FILE_COLUMNS`` of :mod:`spare_gen.wireframes.pairs` (the format `spare-gen rank`
reads); ``choice`` is relative to the pair's stored sides. A line cut short by a crash (no final
newline) is removed when the file is opened again.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
from pathlib import Path

from spare_gen.wireframes.pairs import ANSWER_FILE_COLUMNS, Choice

_MIRROR = {Choice.LEFT: Choice.RIGHT, Choice.RIGHT: Choice.LEFT, Choice.EQUAL: Choice.EQUAL}


def stored_choice(shown: Choice, shown_swapped: bool) -> Choice:
    """The choice relative to the pair's stored left/right, from the side the rater saw it on."""
    return _MIRROR[shown] if shown_swapped else shown


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def _csv_line(values: list[object]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(values)
    return buffer.getvalue()


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def repair(path: Path) -> None:
    """Drop a trailing partial line (the process died inside a write) so the file stays valid CSV."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)
            fh.flush()
            os.fsync(fh.fileno())


def read_positions(path: Path) -> set[int]:
    """Session positions already answered in this file (after :func:`repair`)."""
    repair(path)
    if not path.is_file():
        return set()
    with open(path, newline="", encoding="utf-8") as fh:
        return {int(row["position"]) for row in csv.DictReader(fh) if row.get("position", "").strip().isdigit()}


def append_answer(path: Path, row: dict[str, object]) -> None:
    """Append one answer (header first if the file is new), flush and fsync before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.is_file() or path.stat().st_size == 0
    text = (_csv_line(list(ANSWER_FILE_COLUMNS)) if new else "") + _csv_line([row[c] for c in ANSWER_FILE_COLUMNS])
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))  # one write call: a line is either whole or (cut by a crash) repaired
        os.fsync(fd)
    finally:
        os.close(fd)
    if new:
        _fsync_dir(path.parent)
