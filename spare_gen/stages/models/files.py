"""Discover CAD files in a folder (STEP, BREP, IGES; ABC layout aware), with size limit and de-duplication."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from spare_gen.atomic import bounded_name
from spare_gen.filehash import sha256_file  # noqa: F401  (re-exported)
from spare_gen.runner.isolation import Status

ABC_NAME = re.compile(r"^(\d{8})_[0-9a-f]+_step_\d{3}$", re.IGNORECASE)
# Longest model id: ids name files and folders (models/<id>.step, pool/<id>/<id>-<hex>_overlay.svg), so a
# longer one (a deep path, a long file name) is cut and ends in a hash of the whole (``atomic.bounded_name``).
MODEL_ID_CHARS = 96
REASON_PATH_CHARS = 160  # a path in a one-line reason keeps its start and end within this many characters


@dataclass
class FileItem:
    model_id: str
    path: Path
    size: int
    sha256: str
    skip_reason: str = ""  # kept out on purpose (over the size limit, a duplicate): a skipped row
    error: str = ""  # cannot be a model (link loop, dangling link, FIFO, device, unreadable folder): a failed row
    real_path: str = ""  # links resolved (never raises)


def _safe_id(text: str) -> str:
    return bounded_name(re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "model", MODEL_ID_CHARS)


def model_id_for(path: Path, root: Path) -> str:
    """``abc_<8-digit id>`` for the ABC layout ``<id>/<id>_<hash>_step_000.step``; else the relative path."""
    m = ABC_NAME.match(path.stem)
    if m:
        return f"abc_{m.group(1)}"
    rel = path.relative_to(root).with_suffix("") if path.is_relative_to(root) else Path(path.stem)
    if rel.parts and rel.parts[0] == "..":
        rel = Path(path.stem)
    return _safe_id("__".join(rel.parts))


def _walk(root: Path, wanted: set[str]) -> tuple[list[Path], list[tuple[Path, Status, str]]]:
    """CAD paths under ``root`` (file links included, and folders named like CAD files, which ``discover`` makes
    failed rows: every entry with a CAD suffix is a row) and the folder entries that could not be walked.

    Walks with ``os.scandir`` so that nothing in the folder can stop the listing: an unreadable folder, a
    link loop or a folder reached twice through links becomes an entry of the second list,
    ``(path, status, one-line reason)``, which the model stage turns into a row. Links to folders are
    followed once (by device and inode), links to files are listed as files.
    """
    paths: list[Path] = []
    odd: list[tuple[Path, Status, str]] = []
    seen: dict[tuple[int, int], Path] = {}
    st = os.stat(root)
    seen[(st.st_dev, st.st_ino)] = root
    stack, linked = [root], list[Path]()  # links to folders wait until every folder reached without links is seen
    while stack or linked:
        if not stack:
            path = linked.pop(0)
            try:
                st = os.stat(path)
            except OSError as exc:  # vanished since it was listed
                odd.append((path, Status.FAILED, f"{_rel(path, root)}: folder cannot be read ({exc.strerror or exc})"))
                continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                where = "the root folder" if seen[key] == root else f"the folder {_rel(seen[key], root)}"
                odd.append((path, Status.SKIPPED, f"{_rel(path, root)}: link to {where}, whose files are listed there"))
                continue
            seen[key] = path
            stack.append(path)
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            reason = f"{_rel(folder, root)}: folder cannot be read ({exc.strerror or exc}); its files are not listed"
            odd.append((folder, Status.FAILED, reason))
            continue
        folders = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()  # follows links
            except OSError:  # a link loop (ELOOP) or a vanished target: looked at as a file below
                is_dir = False
            if path.suffix.lower() in wanted:  # a folder named like a CAD file is a row too (failed: a folder)
                paths.append(path)
            if not is_dir:
                continue
            if entry.is_symlink():
                linked.append(path)
            else:
                try:
                    st = entry.stat()
                except OSError as exc:  # vanished since it was listed
                    reason = f"{_rel(path, root)}: folder cannot be read ({exc.strerror or exc})"
                    odd.append((path, Status.FAILED, reason))
                    continue
                seen[(st.st_dev, st.st_ino)] = path
                folders.append(path)
        stack.extend(reversed(folders))
    return sorted(paths), odd


def _rel(path: Path, root: Path) -> str:
    """The path relative to ``root`` for a one-line reason; a very long one (a deep folder) keeps its two ends."""
    text = path.relative_to(root).as_posix() if path.is_relative_to(root) and path != root else str(path)
    if len(text) <= REASON_PATH_CHARS:
        return text
    keep = (REASON_PATH_CHARS - 5) // 2
    return f"{text[:keep]}/.../{text[-keep:]}"


def list_paths(root: str | Path, suffixes: list[str], list_file: str | Path = "") -> tuple[Path, list[Path]]:
    """CAD paths under ``root`` (broken links included, so they fail visibly), or the lines of ``list_file``."""
    root, paths, _ = list_entries(root, suffixes, list_file)
    return root, paths


def list_entries(root: str | Path, suffixes: list[str],
                 list_file: str | Path = "") -> tuple[Path, list[Path], list[tuple[Path, Status, str]]]:
    """``list_paths`` plus the folder entries that could not be walked (``_walk``)."""
    if list_file:
        lf = Path(list_file)
        if not lf.is_file():
            raise FileNotFoundError(f"models.files.list_file: file {str(lf)!r} does not exist")
        base = Path(root) if root else lf.parent
        try:
            data = lf.read_bytes()
        except OSError as exc:
            raise FileNotFoundError(f"models.files.list_file: file {str(lf)!r} cannot be read "
                                    f"({exc.strerror or exc})") from None
        # a listed name need not be UTF-8 (the bytes of a file name, as os.fsdecode reads them): it becomes a row
        text = data.decode("utf-8", "surrogateescape")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        return base, sorted(p if p.is_absolute() else base / p for p in map(Path, lines)), []
    root = Path(root)
    try:  # a subfolder that cannot be read is a row; the root itself lists nothing at all
        if not stat.S_ISDIR(os.stat(root).st_mode):
            raise FileNotFoundError
        os.scandir(root).close()
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"models.files.root: folder {str(root)!r} does not exist") from None
    except OSError as exc:
        raise FileNotFoundError(f"models.files.root: folder {str(root)!r} cannot be listed "
                                f"({exc.strerror or exc})") from None
    return (root, *_walk(root, {s.lower() for s in suffixes}))


def _digest(path: Path) -> str:
    """SHA-256 of a file, or "" if it cannot be read (the model stage then records why, as a failed row)."""
    try:
        return sha256_file(path)
    except OSError:
        return ""


def _not_a_file(path: Path) -> tuple[int, str]:
    """(size, "") for a regular file (through links), else (0, one-line reason it cannot be a model).

    Never opens the path: a FIFO or a device would block or never end.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return 0, f"{path.name}: symbolic link loop ({_link_chain(path)}), cannot be read"
        if path.is_symlink():
            return 0, f"{path.name}: dangling symbolic link to {os.readlink(path)!r} (the target does not exist)"
        return 0, f"{path.name}: vanished after the folder was listed ({exc.strerror or exc})"
    if stat.S_ISREG(st.st_mode):
        return st.st_size, ""
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode) else "a device file"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
            else "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file")
    target = link_target(path)
    link = f" (a symbolic link to {target!r})" if target else ""
    return 0, f"{path.name}: {kind}{link}, not a regular file; not read"


def link_target(path: str | Path) -> str:
    """What a symbolic link reaches, links resolved (``/etc/passwd`` for ``x.step -> /etc/passwd``); "" for a path
    that is no link. A link's row keeps the link's own name, and its error names this target."""
    return real_path(Path(path)) if os.path.islink(path) else ""


def _link_chain(path: Path, steps: int = 4) -> str:
    """``a.step -> b.step -> a.step``: the first few links of a loop, by name."""
    chain, p = [path.name], path
    for _ in range(steps):
        try:
            target = os.readlink(p)
        except OSError:
            break
        p = p.parent / target
        chain.append(Path(target).name)
        if p.name == path.name:
            break
    return " -> ".join(chain)


def real_path(path: Path) -> str:
    """The path with links resolved as far as they go (never raises, even on a link loop)."""
    return os.path.realpath(path)


def discover(
    root: str | Path, suffixes: list[str], max_mb: float, limit: int = 0, list_file: str | Path = ""
) -> list[FileItem]:
    """CAD files sorted by path; over-size and duplicate files carry a skip reason, odd entries an error.

    Missing or unreadable paths are kept (with no hash) so the model stage records them as failed rows; link
    loops, dangling links, FIFOs, devices and folders that cannot be read carry their one-line ``error``.
    """
    root, paths, odd = list_entries(root, suffixes, list_file)
    if limit:
        paths = paths[:limit]
    items: list[FileItem] = []
    seen_hash: dict[str, str] = {}
    seen_real: dict[str, str] = {}
    seen_id: set[str] = set()
    # a file reached through a link and directly is kept under its own name, not the link's
    paths = sorted(paths, key=lambda p: (p.is_symlink(), str(p)))
    for p in paths:
        size, error = _not_a_file(p)
        mid = model_id_for(p, root)
        digest = _digest(p) if not error and size <= max_mb * 1e6 else ""
        if mid in seen_id:
            mid = f"{mid}_{(digest or hashlib.sha256(os.fsencode(p)).hexdigest())[:8]}"
        seen_id.add(mid)
        real = real_path(p)
        item = FileItem(mid, p, size, digest, error=error, real_path=real)
        if error:
            pass
        elif real in seen_real:
            item.skip_reason = f"{p.name}: the same file as {seen_real[real]} (reached through a link), kept once"
        elif size > max_mb * 1e6:
            item.skip_reason = f"{p.name}: {size / 1e6:.1f} MB is over the models.files.max_mb limit of {max_mb:g} MB"
        elif digest and digest in seen_hash:
            item.skip_reason = f"{p.name}: identical content to {seen_hash[digest]} (same sha256), kept once"
        else:
            seen_hash[digest] = mid
            seen_real[real] = mid
        items.append(item)
    for path, status, reason in odd:
        mid = model_id_for(path, root) if path != root else _safe_id(path.name)
        if mid in seen_id:
            mid = f"{mid}_{hashlib.sha256(os.fsencode(path)).hexdigest()[:8]}"
        seen_id.add(mid)
        item = FileItem(mid, path, 0, "", real_path=real_path(path))
        if status is Status.SKIPPED:
            item.skip_reason = reason
        else:
            item.error = reason
        items.append(item)
    return sorted(items, key=lambda it: str(it.path))
