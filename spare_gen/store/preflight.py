"""Checks made before any work: an output folder the run can write into, with room to write, that no other run holds."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import socket
import tempfile
import unicodedata
from pathlib import Path
from typing import Iterator

MIN_FREE_MB = 64


class UnusableOutput(ValueError):
    """The output folder cannot take the run's files (one line naming the folder and the reason)."""


def check_output_path(out: str) -> None:
    """Refuse an output folder that cannot be meant: empty (it would be the current folder), the file system's
    root, a name with a control character (Unicode category Cc: a pasted newline, an escape, a C1 character such as
    U+0085) or with a byte that is not UTF-8 (the command line's undecodable bytes, which ``os.fsdecode`` turns into
    surrogates such as ``\\udcff``); UnusableOutput, before any work."""
    text = os.fspath(out)
    if not text.strip():
        raise UnusableOutput(f"output folder {text!r}: empty; name a folder (out = \"...\" or --out DIR)")
    bad = next((c for c in text if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        raise UnusableOutput(f"output folder {ascii(text)}: contains the control character {ascii(bad)}")
    odd = next((c for c in text if unicodedata.category(c) == "Cs"), None)
    if odd is not None:
        byte = f" (byte 0x{ord(odd) - 0xDC00:02x})" if 0xDC80 <= ord(odd) <= 0xDCFF else ""
        raise UnusableOutput(f"output folder {ascii(text)}: not UTF-8 text: holds an undecodable byte{byte}; name a "
                             "folder in UTF-8")
    if Path(text).resolve() == Path(Path(text).resolve().anchor):
        raise UnusableOutput(f"output folder {text!r}: is the file system's root; name a folder inside it")


def check_output_folder(out: Path, min_free_mb: int = MIN_FREE_MB) -> None:
    """Create ``out`` if needed and prove a file can be written there; raise UnusableOutput otherwise."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UnusableOutput(f"output folder {out}: exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UnusableOutput(f"output folder {out}: cannot be created ({exc.strerror or exc})") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".spare_gen-probe-", dir=out)
        try:
            os.write(fd, b"x" * 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        reason = "no space left on its device" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        raise UnusableOutput(f"output folder {out}: not writable ({reason})") from None
    free_mb = shutil.disk_usage(out).free / 2**20
    if free_mb < min_free_mb:
        raise UnusableOutput(f"output folder {out}: only {free_mb:.0f} MB free on its device "
                             f"(at least {min_free_mb} MB needed to start)")


LOCK_FILE = ".spare_gen.lock"


class OutputInUse(UnusableOutput):
    """Another live spare-gen run holds the output folder's lock (one line naming its pid and host)."""


@contextlib.contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Hold an advisory lock (``flock``) on ``out/.spare_gen.lock`` while a run writes into ``out``; a second run
    gets OutputInUse naming the holder's pid and host. The kernel drops the lock of a process that dies, so a
    lock file left by a killed run is simply taken over. The file is removed on release."""
    path = Path(out) / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise OutputInUse(f"output folder {out}: in use by another spare-gen run ({holder}); wait for it to "
                              f"finish or choose another --out") from None
        except OSError as exc:  # a file system without locks (some network mounts): the run goes on unlocked
            os.close(fd)
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            yield
            return
        try:
            same = os.fstat(fd).st_ino == path.stat().st_ino  # not a file the previous holder removed meanwhile
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on host {socket.gethostname()}\n".encode())
        yield
    finally:
        path.unlink(missing_ok=True)  # while still held: a waiting run then locks a new file
        os.close(fd)


def _holder(fd: int) -> str:
    """What the lock file says about its holder ("pid N on host H")."""
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "pid unknown"
