"""Which files of an output folder spare_gen wrote: the only files it may ever remove.

A run proves a file is its own through its records, never through the file's name or folder:

- what its units wrote (the index of each table part, ``.units/<stage>/part-*.json``, lists every unit's files;
  unit files ``.units/<stage>/<unit>.json.gz`` name theirs), merged here before a stale index is removed;
- what the run's own process wrote (``spare_gen.atomic.noting_writes``: the card, the preview sheets, the audit
  report, the pool's pictures list);
- the tables and every file a table names when a run completes.

These go to the ledger ``.units/written.json`` (bookkeeping, like the rest of ``.units/``), pruned to files that
still exist. A file no record names is not spare_gen's: it is kept and listed (``foreign``), whatever its name.
A file a killed run wrote before any record named it, and that no later run writes again, is listed the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Iterable, Iterator

from spare_gen.atomic import write_json

LEDGER = ".units/written.json"
_removed: list[str] | None = None  # what ``remove`` deleted while ``noting_removals`` is active


@contextlib.contextmanager
def noting_removals() -> Iterator[list[str]]:
    """The list of every file ``remove`` deletes in this process inside the block (a run lists them all)."""
    global _removed
    outer, _removed = _removed, []
    try:
        yield _removed
    finally:
        inner, _removed = _removed, outer
        if outer is not None:
            outer.extend(inner)


def read(out: str | os.PathLike) -> set[str]:
    """The files the ledger says spare_gen wrote into ``out`` (relative POSIX paths)."""
    try:
        return set(json.loads((Path(out) / LEDGER).read_text()).get("files", ()))
    except (OSError, ValueError, AttributeError):
        return set()


def relative(out: str | os.PathLike, paths: Iterable[str | os.PathLike]) -> set[str]:
    """The paths that lie inside ``out``, relative to it (POSIX); relative paths are taken as relative to ``out``
    already, absolute ones outside it are left out."""
    root = os.path.abspath(out)
    found = set()
    for p in paths:
        p = os.fspath(p)
        full = os.path.abspath(p) if os.path.isabs(p) else os.path.join(root, p)
        rel = Path(os.path.relpath(full, root)).as_posix()
        if rel != "." and not rel.startswith("../") and rel != ".." \
                and not any(part.startswith(".") for part in rel.split("/")):  # bookkeeping, temporary names
            found.add(rel)
    return found


def record(out: str | os.PathLike, paths: Iterable[str | os.PathLike], prune: bool = False) -> set[str]:
    """Add ``paths`` (absolute, or relative to ``out``) to the ledger; ``prune``: drop files that no longer exist.
    Returns the ledger. Written only when it changes."""
    before = read(out)
    after = before | relative(out, paths)
    if prune:
        after = {rel for rel in after if (Path(out) / rel).is_file()}
    if after != before:
        write_json(Path(out) / LEDGER, {"files": sorted(after)})
    return after


def remove(out: str | os.PathLike, rels: Iterable[str]) -> list[str]:
    """Delete the files of ``rels`` that the ledger names (and nothing else), then the folders left empty by it;
    return what was deleted, sorted."""
    out = Path(out)
    owned = read(out)
    gone = []
    for rel in sorted(set(rels) & owned):
        path = out / rel
        if path.is_file() and not path.is_symlink():
            path.unlink()
            gone.append(rel)
    for rel in gone:  # folders the deletions emptied, deepest first, never ``out`` itself
        parent = (out / rel).parent
        while parent != out and out in parent.parents:
            try:
                parent.rmdir()  # only succeeds on an empty folder
            except OSError:
                break
            parent = parent.parent
    if _removed is not None:
        _removed.extend(gone)
    return gone
