"""Run OpenCASCADE work in a killable child process with a hard timeout.

OCCT calls hold the GIL, can run for minutes inside one C++ call and can segfault. Each Dask
worker keeps one long-lived child (``python -m spare_gen.runner.child``) and sends it one unit of
work at a time over a pipe; a unit that times out or kills the child becomes a row with a status
and a readable error, and the next unit gets a fresh child. Reusing the child keeps the per-unit
cost to a pickle round trip instead of a Python + OCP start-up.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any

_HEADER = struct.Struct("<Q")


class Status(str, Enum):
    OK = "ok"
    FAILED = "failed"  # the unit raised an exception (bad input, OCCT error)
    TIMEOUT = "timeout"  # killed after the per-unit time limit
    CRASHED = "crashed"  # the child died (segfault, abort, out of memory)
    SKIPPED = "skipped"  # not attempted (duplicate file, over the size limit, unusable upstream)


@dataclass
class Outcome:
    status: Status
    value: Any = None
    error: str = ""
    seconds: float = 0.0


def _signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


def write_message(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes | None:
    """Read n bytes; None on EOF; raise TimeoutError past the deadline."""
    chunks, remaining = [], n
    while remaining:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise TimeoutError
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int, deadline: float | None = None) -> Any:
    """One pickled message; raise EOFError if the peer closed, TimeoutError past the deadline."""
    head = _read_exact(fd, _HEADER.size, deadline)
    if head is None:
        raise EOFError
    body = _read_exact(fd, _HEADER.unpack(head)[0], deadline)
    if body is None:
        raise EOFError
    return pickle.loads(body)


class IsolatedExecutor:
    """One child process that runs ``module:function`` calls, restarted after a timeout or crash."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._stderr = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "spare_gen.runner.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            close_fds=True,
        )

    def _kill(self) -> int:
        proc, self._proc = self._proc, None
        if proc is None:
            return 0
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        return code

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = [ln for ln in self._stderr.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1].strip()[:300] if lines else ""

    def close(self) -> None:
        with self._lock:
            self._kill()

    def run(self, target: str, kwargs: dict, timeout: float) -> Outcome:
        """Call ``target`` ("package.module:function") with ``kwargs`` in the child, within ``timeout`` seconds."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._kill()
                self._start()
            assert self._proc is not None and self._stderr is not None
            self._stderr.seek(0)
            self._stderr.truncate()
            start = time.monotonic()
            try:
                write_message(self._proc.stdin.fileno(), (target, kwargs))
                reply = read_message(self._proc.stdout.fileno(), start + timeout)
            except TimeoutError:
                self._kill()
                return Outcome(Status.TIMEOUT, error=f"timed out after {timeout:g} s", seconds=time.monotonic() - start)
            except (EOFError, BrokenPipeError, OSError):
                code = self._kill()
                tail = self._stderr_tail()
                error = f"child process died ({_signal_name(code)})" + (f": {tail}" if tail else "")
                return Outcome(Status.CRASHED, error=error, seconds=time.monotonic() - start)
            seconds = time.monotonic() - start
            kind, payload = reply
            if kind == "ok":
                return Outcome(Status.OK, value=payload, seconds=seconds)
            return Outcome(Status.FAILED, error=payload, seconds=seconds)


_EXECUTOR: IsolatedExecutor | None = None


def worker_executor() -> IsolatedExecutor:
    """The executor of this process (one per Dask worker, created on first use)."""
    global _EXECUTOR
    if _EXECUTOR is None:
        _EXECUTOR = IsolatedExecutor()
    return _EXECUTOR
