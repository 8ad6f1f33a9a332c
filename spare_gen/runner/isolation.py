"""Run OpenCASCADE work in a killable child process under a CPU-time budget.

OCCT calls hold the GIL, can run for minutes inside one C++ call and can segfault. Each Dask
worker keeps one long-lived child (``python -m spare_gen.runner.child``) and sends it one call at a
time over a pipe; reusing the child keeps the per-call cost to a pickle round trip.

Two kinds of failure are kept apart:

* **final** (the geometry decided): the call raised, the child crashed by itself (SIGSEGV, SIGABRT),
  or it used more CPU time than its budget. CPU time, not wall time, so a budget decides the same
  way on a loaded machine as on an idle one. Such an outcome is a row with a status and an error.
* **transient** (the machine decided): the child was killed by a signal it did not raise (SIGKILL
  from the OOM killer, SIGINT from Ctrl-C, SIGTERM), an OSError such as ENOSPC or EIO, or the wall
  clock ran past a generous safety limit while the CPU budget was not used up (an overloaded
  machine). Such an outcome is never recorded: the stage runner retries it, then reports it.
  An OSError that the input decided (``input_caused``: a path or name too long, a file nobody may
  read, a link loop) is final: every retry would repeat it, so it is the unit's row.

Calls made while a unit runs carry the unit's test-hook context (``spare_gen.runner.testhooks``), so
hooks fire in the child once per call, not through every function signature.
"""

from __future__ import annotations

import errno
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
from typing import IO, Any

from spare_gen.runner import testhooks

_HEADER = struct.Struct("<Q")
_POLL_S = 0.05
# Signals a child does not send itself: someone (the OOM killer, the terminal, the OS) stopped it.
EXTERNAL_SIGNALS = frozenset({signal.SIGKILL, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})


# OSError numbers that the input decides, not the machine: retrying cannot help, so they are the unit's row.
INPUT_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.EACCES, errno.EPERM, errno.ELOOP, errno.ENOTDIR, errno.EISDIR,
                          errno.EILSEQ})


def input_caused(exc: OSError) -> bool:
    """True for an OSError that every rerun would repeat on the same input (``INPUT_ERRNOS``)."""
    return exc.errno in INPUT_ERRNOS


class Status(str, Enum):
    OK = "ok"
    FAILED = "failed"  # the unit raised an exception (bad input, OCCT error)
    TIMEOUT = "timeout"  # used more CPU time than its budget
    CRASHED = "crashed"  # the child died by itself (segfault, abort)
    SKIPPED = "skipped"  # not attempted (duplicate file, over the size limit, unusable upstream)
    TRANSIENT = "transient"  # the machine, not the unit: retried, never recorded as a result


@dataclass
class Outcome:
    status: Status
    value: Any = None
    error: str = ""
    seconds: float = 0.0  # wall time
    cpu_seconds: float = 0.0


def wall_limit(cpu_budget: float) -> float:
    """Wall-clock safety limit for a call with ``cpu_budget`` CPU seconds (reached only on an overloaded machine)."""
    return max(10.0 * cpu_budget, cpu_budget + 300.0)


def _signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


def _external_signal(returncode: int) -> bool:
    return returncode < 0 and -returncode in {int(s) for s in EXTERNAL_SIGNALS}


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process ``pid`` (Linux /proc); None where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


def write_message(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int) -> bytes | None:
    """Read n bytes; None on EOF."""
    chunks, remaining = [], n
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int) -> Any:
    """One pickled message; raise EOFError if the peer closed."""
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        raise EOFError
    body = _read_exact(fd, _HEADER.unpack(head)[0])
    if body is None:
        raise EOFError
    return pickle.loads(body)


class _OverBudget(Exception):
    def __init__(self, transient: bool, message: str):
        super().__init__(message)
        self.transient = transient


class IsolatedExecutor:
    """One child process that runs ``module:function`` calls, restarted after a timeout or crash."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._stderr: IO[bytes] | None = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
        self._proc = proc = subprocess.Popen(
            [sys.executable, "-m", "spare_gen.runner.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            close_fds=True,
            start_new_session=True,  # a Ctrl-C in the terminal stops the run, not the unit in flight
        )
        # The child imports OCP before it says it is ready: that start-up is not charged to the first unit.
        read_message(proc.stdout.fileno())  # type: ignore[union-attr]  # stdout=PIPE: never None

    def _kill(self) -> int:
        proc, self._proc = self._proc, None
        if proc is None:
            return 0
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]  # both PIPE: never None
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

    def _wait_reply(self, budget: float) -> Any:
        """The child's reply; raise _OverBudget past the CPU budget (final) or the wall limit (transient)."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None, "the child is started before a call"
        fd = proc.stdout.fileno()
        cpu0 = cpu_seconds(proc.pid)
        start = time.monotonic()
        limit = wall_limit(budget)
        while True:
            ready, _, _ = select.select([fd], [], [], _POLL_S)
            if ready:
                return read_message(fd)
            used = None if cpu0 is None else (cpu_seconds(proc.pid) or cpu0) - cpu0
            wall = time.monotonic() - start
            if used is not None and used > budget:
                raise _OverBudget(False, f"used more than its CPU budget of {budget:g} s")
            if used is None and wall > budget:  # no CPU clock for the child: wall time is all there is
                raise _OverBudget(False, f"timed out after {budget:g} s")
            if wall > limit:
                raise _OverBudget(True, f"machine overloaded: {wall:.0f} s wall time but only "
                                        f"{used or 0:.1f} s of its {budget:g} s CPU budget")

    def run(self, target: str, kwargs: dict, timeout: float, phase: str = "") -> Outcome:
        """Call ``target`` ("package.module:function") with ``kwargs`` in the child, within ``timeout`` CPU seconds.

        ``phase`` names the attempt for test hooks (e.g. ``drawings-exact:<unit>``).
        """
        with self._lock:
            start = time.monotonic()
            try:
                if self._proc is None or self._proc.poll() is not None:
                    self._kill()
                    self._start()
                assert self._proc is not None and self._proc.stdin is not None and self._stderr is not None
                self._stderr.seek(0)
                self._stderr.truncate()
                cpu_start = cpu_seconds(self._proc.pid) or 0.0
                write_message(self._proc.stdin.fileno(), (target, kwargs, testhooks.call_context(phase)))
                reply = self._wait_reply(float(timeout))
            except _OverBudget as exc:
                self._kill()
                status = Status.TRANSIENT if exc.transient else Status.TIMEOUT
                return Outcome(status, error=str(exc), seconds=time.monotonic() - start)
            except (EOFError, OSError):
                code = self._kill()
                tail = self._stderr_tail()
                error = f"child process died ({_signal_name(code)})" + (f": {tail}" if tail else "")
                status = Status.TRANSIENT if _external_signal(code) or code == 0 else Status.CRASHED
                return Outcome(status, error=error, seconds=time.monotonic() - start)
            seconds = time.monotonic() - start
            cpu = max(0.0, (cpu_seconds(self._proc.pid) or cpu_start) - cpu_start)
            status, payload = reply
            if status is Status.OK:
                return Outcome(Status.OK, value=payload, seconds=seconds, cpu_seconds=cpu)
            return Outcome(status, error=payload, seconds=seconds, cpu_seconds=cpu)


_EXECUTOR: IsolatedExecutor | None = None


def worker_executor() -> IsolatedExecutor:
    """The executor of this process (one per Dask worker, created on first use)."""
    global _EXECUTOR
    if _EXECUTOR is None:
        _EXECUTOR = IsolatedExecutor()
    return _EXECUTOR
