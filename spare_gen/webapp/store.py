"""Answers files of the served apps: one CSV row appended and fsync'ed per answer, read back to resume.

A row is written with one ``write`` call on an ``O_APPEND`` descriptor and fsync'ed before the answer is
acknowledged, so an acknowledged answer survives a SIGKILL or a power cut; a line cut short by a crash (no final
newline) is removed when the file is opened again (:func:`repair`). Person names become file names, so they are
checked here (:func:`check_name`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
from pathlib import Path
from typing import Iterable

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # the whole name (fullmatch): no trailing newline


def check_name(name: object, what: str = "rater") -> str:
    """A person's id usable as a file name: letters, digits, '_', '.', '-' (starting with a letter or digit), <= 64."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"{what} name {name!r} is not allowed: "
            "use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    return name


def utc_now() -> str:
    return utc_text(dt.datetime.now(dt.timezone.utc).timestamp())


def utc_text(seconds: float) -> str:
    """A POSIX time as ISO 8601 UTC with milliseconds, as every answers file writes it."""
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat(timespec="milliseconds")


def _csv_line(values: Iterable[object]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(list(values))
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


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of an answers file (after :func:`repair`), as strings; [] when there is none yet."""
    repair(path)
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def append_row(path: Path, columns: tuple[str, ...], row: dict[str, object]) -> None:
    """Append one row (header ``columns`` first if the file is new), flush and fsync before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.is_file() or path.stat().st_size == 0
    text = (_csv_line(columns) if new else "") + _csv_line(row[c] for c in columns)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))  # one write call: a line is either whole or (cut by a crash) repaired
        os.fsync(fd)
    finally:
        os.close(fd)
    if new:
        _fsync_dir(path.parent)
