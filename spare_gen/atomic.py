"""Atomic file writes: a temporary name in the same folder, then ``os.replace``.

A reader (or a resumed run) never sees a half-written file under its final name. ``noting_writes`` collects the
final path (made absolute) of every write this process makes meanwhile: how a run proves which files of its output
folder it wrote itself (``spare_gen.store.ownership``).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator


NAME_HASH_CHARS = 16  # hex digits of SHA-256 that stand for the cut-off part of a long name
TMP_NAME_CHARS = 100  # the final name's share of a temporary name (the rest: pid, counter, ".tmp"; 255 in all)


def bounded_name(name: str, limit: int) -> str:
    """``name`` itself if it has at most ``limit`` characters, else its start, "-" and a hash of the whole name.

    A file name derived from an input (a model id, a CAD file's name) goes through this, so a legal input
    name never makes an illegal output name (255 bytes on most file systems): distinct names stay distinct.
    """
    if len(name.encode()) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:NAME_HASH_CHARS]
    head = name.encode()[:limit - NAME_HASH_CHARS - 1].decode(errors="ignore")
    return f"{head}-{digest}"




class Collector:
    """What a process notes inside ``with collector.noting() as items:`` blocks (paths written, removed, kept): the
    block's list; an outer block gets the inner block's items too; outside any block nothing is kept."""

    def __init__(self) -> None:
        self.items: list[str] | None = None

    @contextlib.contextmanager
    def noting(self) -> Iterator[list[str]]:
        outer, self.items = self.items, []
        try:
            yield self.items
        finally:
            inner, self.items = self.items, outer
            if outer is not None:
                outer.extend(inner)

    def add(self, *items: str) -> None:
        if self.items is not None:
            self.items.extend(items)


_WRITES = Collector()  # final paths written while ``noting_writes`` is active


def noting_writes() -> contextlib.AbstractContextManager[list[str]]:
    """The list of the final path (absolute) of every atomic write this process makes inside the block; an outer
    block gets the inner block's paths too."""
    return _WRITES.noting()


def _note(path: str | os.PathLike) -> None:
    # absolute: a run whose output folder is given relative to the current one writes paths that start with that
    # folder, not inside it
    _WRITES.add(os.path.abspath(path))


def _tmp_path(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{bounded_name(path.name, TMP_NAME_CHARS)}."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; outputs are data meant to be shared
    return Path(tmp)


_TMP_COUNTER = itertools.count()  # with the pid: a temporary name no other writer uses (threads included)
_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def _open_tmp(path: str) -> tuple[int, str]:
    """A new temporary file next to ``path`` (made on first use of a folder), opened for writing.

    One ``open`` instead of mkstemp + close + chmod + reopen: the drawings stage writes two files per
    view, where those syscalls cost more than encoding the PNG. A name left by a killed process with
    the same pid is skipped (O_EXCL). Plain strings, no pathlib: this runs twice per drawing.
    """
    folder, name = os.path.split(path)
    name = bounded_name(name, TMP_NAME_CHARS)
    made_folder = False
    while True:
        tmp = os.path.join(folder, f".{name}.{os.getpid()}-{next(_TMP_COUNTER)}.tmp")
        try:
            fd = os.open(tmp, _TMP_FLAGS, 0o644)
        except FileExistsError:
            continue
        except FileNotFoundError:
            if made_folder or not folder:
                raise
            os.makedirs(folder, exist_ok=True)
            made_folder = True
            continue
        os.fchmod(fd, 0o644)  # whatever the umask: outputs are data meant to be shared
        return fd, tmp


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    target = os.fspath(path)
    fd, tmp = _open_tmp(target)
    try:
        with open(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
        _note(target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path if isinstance(path, Path) else Path(path)


def write_text(path: str | os.PathLike, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    return write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_parquet(path: str | os.PathLike, table) -> Path:
    """Write a pyarrow Table atomically (no timestamps or paths embedded, so equal tables give equal bytes)."""
    import pyarrow.parquet as pq

    path = Path(path)
    tmp = _tmp_path(path)
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
        _note(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def with_tmp_path(path: str | os.PathLike, writer) -> Path:
    """Call ``writer(tmp_path)`` and rename the result to ``path`` (for libraries that write files themselves)."""
    path = Path(path)
    tmp = _tmp_path(path)
    try:
        writer(tmp)
        os.replace(tmp, path)
        _note(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
