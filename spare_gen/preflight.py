"""Checks made before any work: an output folder the run can write into, with room to write."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

MIN_FREE_MB = 64


class UnusableOutput(ValueError):
    """The output folder cannot take the run's files (one line naming the folder and the reason)."""


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
