"""Which files of an output folder spare_gen wrote: the only files it may ever remove, in every folder.

A file is spare_gen's only when its ledger ``.units/written.json`` names the path AND the file still holds the bytes
spare_gen wrote there. The ledger keeps, per file, its size, its modification time (ns) and its SHA-256: a file
whose size and time are as recorded is unchanged (no read); one whose time differs is read and its hash compared
(a copy that did not keep times is still spare_gen's); any other file is not spare_gen's, or was changed since: kept,
never removed, listed once. That holds in ``.units/<stage>/``, ``timings/<stage>/``, table folders
(``views.parquet/part-mine.parquet``, a user's ``.n.tmp``) and everywhere else; no name or folder makes a file
spare_gen's.

The ledger learns a file from spare_gen's own records, never from the folder alone:

- what a run's units wrote (unit files and part indexes list them), the table parts, indexes and timing files its
  workers wrote, and what its own process wrote (``spare_gen.atomic.noting_writes``);
- what the commands that write into a dataset later wrote (``recording``: train-baseline, the Figure 6 pipeline,
  quiz, cache, audit, show, export ...).

Inside a run (``run_window``), a file the ledger already names but whose bytes differ is recorded anew only when it
was written during the run (its status change time, which no user can set back, is not older than the run's
start, read off the file system's own clock): a file the user changed before the run stays "changed". Outside a run every recorded write is new. The ledger's
old form (paths only, spare_gen before 0.x) is adopted once: its files are hashed as they are (``adopt``).

A few files are spare_gen's by name, since they say what the folder is: ``dataset.json``, ``run.json``, the
ledger, and the run's lock file (``NAMED``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from spare_gen.atomic import Collector, noting_writes, write_json
from spare_gen.filehash import sha256_file

LEDGER = ".units/written.json"
LEDGER_VERSION = 2
# files spare_gen owns by name: the dataset's record, the run's record, this ledger, the run's lock
NAMED = frozenset({"dataset.json", "run.json", LEDGER, ".spare_gen.lock"})
LEDGER_MAX_BYTES = 1 << 30  # a ledger larger than this is no ledger of spare_gen's (read refused, not loaded)
# bookkeeping folders spare_gen's runs owned whole before the ledger named their files (``adopt``, once)
_BOOKKEEPING_FOLDERS = (".units/", "timings/")

_REMOVED = Collector()  # what ``remove`` deleted while ``noting_removals`` is active
_KEPT = Collector()  # what ``remove`` kept (not spare_gen's bytes any more) meanwhile
_since_ns: int | None = None  # inside ``run_window``: the run's start on the output folder's clock
_cache: dict[str, tuple[tuple[int, ...], dict[str, "Entry"], bool]] = {}  # ledger path -> (stat key, entries, old)
hash_seconds = 0.0  # CPU seconds spent hashing files for the ledger in this process (reported by benchmarks)


@dataclass(frozen=True)
class Entry:
    """What spare_gen wrote at a path: size, modification time (ns), SHA-256 (None: an old ledger's path only)."""

    size: int
    mtime_ns: int
    sha256: str | None

    def as_json(self) -> list:
        return [self.size, self.mtime_ns, self.sha256]


def noting_removals() -> contextlib.AbstractContextManager[list[str]]:
    """The list of every file ``remove`` deletes in this process inside the block (a run lists them all)."""
    return _REMOVED.noting()


def noting_kept() -> contextlib.AbstractContextManager[list[str]]:
    """The list of every file ``remove`` was asked to delete but kept, its bytes not the ones spare_gen wrote."""
    return _KEPT.noting()


@contextlib.contextmanager
def run_window(out: str | os.PathLike, clock_file: str | os.PathLike | None = None) -> Iterator[int]:
    """Inside the block, a file the ledger names that changed is recorded anew only when written since the block
    began (by the files' status change time). The start is read off ``clock_file``'s status change time (a file the run just wrote, e.g. its lock), so
    the output folder's own clock decides, or off a probe file made now."""
    global _since_ns
    outer = _since_ns
    if clock_file is not None:
        _since_ns = os.stat(clock_file).st_ctime_ns
    else:
        probe = Path(out) / f".spare_gen-clock-{os.getpid()}"
        probe.parent.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        try:
            _since_ns = os.stat(probe).st_ctime_ns
        finally:
            probe.unlink(missing_ok=True)
    try:
        yield _since_ns
    finally:
        _since_ns = outer


def _hash(path: str) -> str:
    global hash_seconds
    started = time.process_time()
    try:
        return sha256_file(path)
    finally:
        hash_seconds += time.process_time() - started


def _regular(path: str) -> os.stat_result | None:
    """The file's own status (no link followed) if it is a regular file, else None (missing, a folder, a link,
    a FIFO, a socket, a device: never opened)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _load(out: Path) -> tuple[dict[str, Entry], bool]:
    """(entries, old form) of the ledger; an unreadable, oversized or special ledger reads as empty."""
    path = os.path.join(out, LEDGER)
    st = _regular(path)
    if st is None or st.st_size > LEDGER_MAX_BYTES:
        return {}, False
    key = _key(st)
    hit = _cache.get(os.path.abspath(path))
    if hit is not None and hit[0] == key:
        return dict(hit[1]), hit[2]
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read(LEDGER_MAX_BYTES + 1))
        files = data.get("files", ())
    except (OSError, ValueError, AttributeError):
        return {}, False
    old = isinstance(files, list)
    entries: dict[str, Entry] = {}
    try:
        if old:
            entries = {rel: Entry(-1, -1, None) for rel in files if isinstance(rel, str)}
        else:
            entries = {rel: Entry(int(v[0]), int(v[1]), v[2]) for rel, v in files.items()}
    except (TypeError, ValueError, IndexError, AttributeError):
        return {}, False
    _cache[os.path.abspath(path)] = (key, dict(entries), old)
    return entries, old


def entries(out: str | os.PathLike) -> dict[str, Entry]:
    """The ledger: relative POSIX path -> what spare_gen wrote there."""
    return _load(Path(out))[0]


def read(out: str | os.PathLike) -> set[str]:
    """The paths the ledger says spare_gen wrote into ``out`` (relative POSIX paths), changed since or not."""
    return set(entries(out))


def is_old(out: str | os.PathLike) -> bool:
    """True for a ledger in the old form (paths without sizes and hashes), written by spare_gen before 0.x."""
    return _load(Path(out))[1]


def _key(st: os.stat_result) -> tuple[int, ...]:
    """What tells one ledger file from another: each write is a new file (atomic), so a new inode and times."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _write(out: Path, found: dict[str, Entry]) -> None:
    path = write_json(out / LEDGER, {"version": LEDGER_VERSION,
                                     "files": {rel: found[rel].as_json() for rel in sorted(found)}})
    st = _regular(os.fspath(path))
    if st is not None:  # what this process just wrote: no need to read it back
        _cache[os.path.abspath(path)] = (_key(st), dict(found), False)


def relative(out: str | os.PathLike, paths: Iterable[str | os.PathLike]) -> set[str]:
    """The paths that lie inside ``out``, relative to it (POSIX); relative paths are taken as relative to ``out``
    already, absolute ones outside it are left out, and so are the files spare_gen owns by name (``NAMED``)."""
    root = os.path.abspath(out)
    found = set()
    for p in paths:
        p = os.fspath(p)
        full = os.path.abspath(p) if os.path.isabs(p) else os.path.join(root, p)
        rel = Path(os.path.relpath(full, root)).as_posix()
        if rel != "." and not rel.startswith("../") and rel != ".." and rel not in NAMED:
            found.add(rel)
    return found


def unchanged(out: str | os.PathLike, rel: str, entry: Entry | None, strict: bool = False) -> bool:
    """True if the file at ``rel`` is a regular file holding the bytes the ledger entry records (``strict``: read
    and hashed even when its size and time are as recorded)."""
    if entry is None or entry.sha256 is None:
        return False
    path = os.path.join(out, rel)
    st = _regular(path)
    if st is None or st.st_size != entry.size:
        return False
    return (st.st_mtime_ns == entry.mtime_ns and not strict) or _hash(path) == entry.sha256


def _fact(path: str, st: os.stat_result) -> Entry:
    return Entry(st.st_size, st.st_mtime_ns, _hash(path))


def record(out: str | os.PathLike, paths: Iterable[str | os.PathLike], prune: bool = False) -> set[str]:
    """Add what spare_gen wrote at ``paths`` (absolute, or relative to ``out``) to the ledger; ``prune``: drop the
    paths whose file is gone. Returns the ledger's paths. Written only when it changes.

    A path already recorded with the same bytes stays as it is; one whose bytes differ is recorded anew only when
    written since the run began (``run_window``), or always outside a run: a file changed by someone else before
    the run keeps its old record, so it stays "changed" and is never removed."""
    out = Path(out)
    found, old = _load(out)
    before = dict(found)
    for rel in sorted(relative(out, paths)):
        path = os.path.join(out, rel)
        st = _regular(path)
        if st is None:
            continue
        entry = found.get(rel)
        if entry is not None and entry.sha256 is not None and entry.size == st.st_size \
                and entry.mtime_ns == st.st_mtime_ns:
            continue
        if entry is None or entry.sha256 is None or _since_ns is None or st.st_ctime_ns >= _since_ns:
            found[rel] = _fact(path, st)
        elif entry.size == st.st_size and _hash(path) == entry.sha256:
            found[rel] = Entry(st.st_size, st.st_mtime_ns, entry.sha256)  # the same bytes under a copy's time
        # else: changed by someone else before the run began: the old record stays, the file stays "changed"
    if prune:
        found = {rel: e for rel, e in found.items() if _regular(os.path.join(out, rel)) is not None}
    if found != before or old:
        _write(out, found)
    return set(found)


def record_written_since(out: str | os.PathLike, paths: Iterable[str | os.PathLike]) -> set[str]:
    """``record`` the files of ``paths`` written during the run (``run_window``: status change not older than its
    start; outside a run, all of them): for a folder of spare_gen's whose files no record lists one by one (a unit's
    staged cut objects), a file someone put there before the run is never taken."""
    out = Path(out)
    recent = []
    for rel in relative(out, paths):
        st = _regular(os.path.join(out, rel))
        if st is not None and (_since_ns is None or st.st_ctime_ns >= _since_ns):
            recent.append(rel)
    return record(out, recent)


def forget(out: str | os.PathLike, rels: Iterable[str]) -> None:
    """Drop ``rels`` from the ledger (files spare_gen removed)."""
    out = Path(out)
    found, old = _load(out)
    kept = {rel: e for rel, e in found.items() if rel not in set(rels)}
    if kept != found or old:
        _write(out, kept)


def remove(out: str | os.PathLike, rels: Iterable[str], listed: bool = True) -> list[str]:
    """Delete the files of ``rels`` that the ledger names and that still hold the bytes spare_gen wrote (nothing
    else: a changed one is kept, see ``noting_kept``), then the folders left empty by it; return what was deleted,
    sorted. ``listed``: the deletions go to ``noting_removals`` (False: a table part or index a run replaced)."""
    out = Path(out)
    found = entries(out)
    gone = []
    for rel in sorted(set(rels) & set(found)):
        if unchanged(out, rel, found[rel]):
            (out / rel).unlink()
            gone.append(rel)
        elif _regular(os.path.join(out, rel)) is not None or os.path.lexists(out / rel):
            _KEPT.add(rel)
    if gone:
        forget(out, gone)
    for rel in gone:  # folders the deletions emptied, deepest first, never ``out`` itself
        parent = (out / rel).parent
        while parent != out and out in parent.parents:
            try:
                parent.rmdir()  # only succeeds on an empty folder
            except OSError:
                break
            parent = parent.parent
    if listed:
        _REMOVED.add(*gone)
    return gone


def kind(mode: int) -> str:
    """A file's kind in words (for a listing)."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "a file"


def walk(out: str | os.PathLike) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry of ``out`` that is not a folder (relative POSIX path, its own status), dot files and dot folders
    included, sorted; links are listed, never followed, and nothing is opened."""
    out = os.fspath(out)
    found = []
    for root, dirs, files in os.walk(out):
        folder = os.path.relpath(root, out)
        prefix = "" if folder == "." else Path(folder).as_posix() + "/"
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(root, d)))]:
            try:
                found.append((prefix + name, os.lstat(os.path.join(root, name))))
            except OSError:
                continue
    yield from sorted(found, key=lambda item: item[0])


def not_ours(out: str | os.PathLike, also: frozenset[str] | set[str] = frozenset(),
             hash_all_but: frozenset[str] | set[str] | None = None) -> tuple[list[str], list[str]]:
    """(files no record names, recorded files whose bytes changed) in all of ``out``: every entry that is not one of
    spare_gen's files as it wrote it. ``also``: paths to take as spare_gen's besides the ledger's (none of the two
    lists names them). ``hash_all_but``: hash every recorded file but these, whatever its time says (validate)."""
    found = entries(out)
    foreign, changed = [], []
    for rel, st in walk(out):
        if rel in NAMED or rel in also:
            continue
        entry = found.get(rel)
        if entry is None:
            foreign.append(rel)
        elif not stat.S_ISREG(st.st_mode) or not unchanged(
                out, rel, entry, strict=hash_all_but is not None and rel not in hash_all_but):
            changed.append(rel)
    return foreign, changed


def adopt(out: str | os.PathLike) -> int:
    """An old ledger (paths only) in the current form: each file it names, and each file of the bookkeeping folders
    older runs owned whole (``.units/``, ``timings/``; temporary names aside), hashed once as it is now. Returns how
    many files were adopted (0: nothing to adopt)."""
    out = Path(out)
    found, old = _load(out)
    if not old:
        return 0
    names = set(found)
    for rel, st in walk(out):
        if stat.S_ISREG(st.st_mode) and rel not in NAMED and rel.startswith(_BOOKKEEPING_FOLDERS) \
                and not os.path.basename(rel).startswith("."):
            names.add(rel)
    adopted: dict[str, Entry] = {}
    for rel in sorted(names - NAMED):
        status = _regular(os.path.join(out, rel))
        if status is not None:
            adopted[rel] = _fact(os.path.join(out, rel), status)
    _write(out, adopted)
    return len(adopted)


def digest(out: str | os.PathLike, bookkeeping) -> str:
    """SHA-256 of what the ledger says in the part that a config decides: the path, size and hash of each file that
    is not bookkeeping (``bookkeeping(rel)``: resume state and timings, whose bytes and names depend on the runs
    before). dataset.json records it, so an edit to the ledger is caught by ``spare-gen validate``; an edit to a
    bookkeeping entry is caught there too, as the file no longer matching its record (or a stray file)."""
    h = hashlib.sha256()
    for rel, e in sorted(entries(out).items()):
        if not bookkeeping(rel):
            h.update(json.dumps([rel, e.size, e.sha256]).encode() + b"\n")
    return h.hexdigest()


@contextlib.contextmanager
def recording(out: str | os.PathLike, after=None) -> Iterator[list[str]]:
    """For a command that writes into a dataset folder after its run (train-baseline, quiz, cache, show, export,
    the Figure 6 pipeline ...): every file this process writes into ``out`` inside the block goes to the ledger, even
    when the block fails; then ``after(out, paths)`` (dataset.json's record of the ledger and of those files). Nothing for a folder that is
    not a spare_gen output (no dataset.json)."""
    with noting_writes() as written:
        try:
            yield written
        finally:
            ours = relative(out, written)
            if ours and os.path.isfile(os.path.join(out, "dataset.json")):
                record(out, ours)
                if after is not None:
                    after(out, ours)
