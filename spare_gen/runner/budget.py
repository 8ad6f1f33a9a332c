"""CPU-budgeted fork engine: a forked copy of the calling process runs calls whose steps each get a CPU budget.

Used inside a stage's isolated child for work whose single steps can run long in one C++ call (a boolean, a
view's hidden-line removal). The copy (``os.fork``: copy-on-write; one long-lived copy per process, a fresh one
after a kill) reports each step with its own CPU clock at the step's start; the parent reads the copy's CPU time
from /proc every ``POLL_S`` once the step could have used its budget, and kills it when one step has used more
than the budget. Before that the parent sleeps (waking for the copy's messages): the copy cannot use more CPU
seconds than the machine has CPUs per second of wall time, so those polls could not have found it over its budget.
CPU time, not wall time, so the verdict does not depend on machine load. The fork also turns a crash inside one
step into a failed call. State that many calls share (``hold``) crosses the pipe once, not with every call: a live
copy receives it pickled before its next call, a copy forked later inherits it.
"""

from __future__ import annotations

import gc
import os
import pickle
import resource
import select
import signal
import time
from dataclasses import dataclass
from enum import Enum
from typing import Callable

from spare_gen.runner.child import _die_with_parent
from spare_gen.runner.isolation import cpu_seconds, read_message, write_message

POLL_S = 0.01
_CPUS = os.sysconf("SC_NPROCESSORS_CONF")  # a process's CPU seconds per wall second, at most
_CLOCK_SLACK_S = 2 / os.sysconf("SC_CLK_TCK")  # /proc's CPU time lags the true one by up to a clock tick
_STEP, _OSERROR = "step", "oserror"  # message tags of the copy besides a call's final status


class CallStatus(str, Enum):
    OK = "ok"
    OVER_BUDGET = "over_budget"  # one step used more CPU seconds than the budget: the copy was killed
    ERROR = "error"  # the work raised
    CRASHED = "crashed"  # the copy died by itself (segfault, abort)


@dataclass(frozen=True)
class CallOutcome:
    """One ``BudgetedCopy.call``: its status, the step it ended in, the CPU seconds it used; ``value`` when OK,
    ``step_cpu_s`` (the step's CPU seconds) when OVER_BUDGET, ``error`` when ERROR."""

    status: CallStatus
    cpu_s: float
    step: str = ""
    value: object = None
    step_cpu_s: float = 0.0
    error: str = ""


def frames(buf: bytearray) -> list:
    """Complete (length-prefixed pickle) messages at the start of ``buf``, consumed from it."""
    out = []
    while len(buf) >= 8:
        n = int.from_bytes(buf[:8], "little")
        if len(buf) < 8 + n:
            break
        out.append(pickle.loads(bytes(buf[8:8 + n])))
        del buf[:8 + n]
    return out


class BudgetedCopy:
    """A forked copy of this process that runs ``work(state, request, mark)`` calls, each step of a call (started
    by ``mark(name)``) within ``budget_s`` CPU seconds; ``state`` is the one last given to ``hold``.

    The copy lives for many calls (one fork, not one per call); a copy killed over its budget is
    replaced by a fresh fork on the next call. ``call`` returns a ``CallOutcome``; an OSError or MemoryError in the copy
    (a machine fault such as a full disk) is raised here again. What ``work`` changes in ``state`` stays in the
    copy for its next calls; a fresh copy starts from this process's ``state``.
    """

    def __init__(self, work: Callable[[object, object, Callable[[str], None]], object], budget_s: float):
        self.work, self.budget_s = work, float(budget_s)
        self.pid: int | None = None
        self.reaped_cpu = 0.0  # CPU seconds of copies already ended
        self.state, self.state_sent = None, True  # a copy forked now inherits the state

    def hold(self, state) -> None:
        """``state`` for the next calls: pickled to the live copy once, before its next call (a copy forked
        later inherits it)."""
        self.state, self.state_sent = state, self.pid is None

    def _fork(self) -> int:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        gc.freeze()  # the copy's collector leaves this process's objects alone: far fewer copy-on-write copies
        pid = os.fork()
        if pid == 0:  # the copy: never returns
            code = 0
            try:
                os.close(req_w)
                os.close(rep_r)
                _die_with_parent()
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
                self._serve(req_r, rep_w)
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        os.close(req_r)
        os.close(rep_w)
        self.pid, self.req, self.rep, self.state_sent = pid, req_w, rep_r, True
        return pid

    def _serve(self, req: int, rep: int) -> None:
        def mark(step: str) -> None:
            write_message(rep, (_STEP, step, time.process_time()))

        while True:
            try:
                kind, payload = read_message(req)
            except EOFError:
                return
            if kind == "state":
                self.state = payload
                continue
            msg: tuple[str, object]  # (CallStatus or _OSERROR, the value or the error's one line)
            try:
                msg = (CallStatus.OK, self.work(self.state, payload, mark))
            except (OSError, MemoryError) as exc:
                msg = (_OSERROR, f"{type(exc).__name__}: {exc}")
            except Exception as exc:  # noqa: BLE001 - reported as a failed call
                msg = (CallStatus.ERROR, f"{type(exc).__name__}: {exc}"[:500])
            write_message(rep, msg)

    def _end(self, kill: bool) -> None:
        if self.pid is None:
            return
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        for fd in (self.req, self.rep):
            os.close(fd)
        _, _, usage = os.wait4(self.pid, 0)
        self.reaped_cpu += usage.ru_utime + usage.ru_stime
        self.pid = None

    def close(self) -> None:
        self._end(kill=False)

    def cpu_s(self) -> float:
        """CPU seconds of every copy so far, the live one included."""
        live = cpu_seconds(self.pid) if self.pid is not None else None
        return self.reaped_cpu + (live or 0.0)

    def _wait_s(self, used: float | None, step_cpu0: float | None) -> float:
        """Wall seconds before the step in progress could pass its budget (``POLL_S`` at least): no poll before."""
        if used is None:
            return POLL_S
        spent = 0.0 if step_cpu0 is None else used - step_cpu0  # no step yet: its mark wakes the parent
        return max(POLL_S, (self.budget_s - spent - _CLOCK_SLACK_S) / _CPUS)

    def call(self, request) -> CallOutcome:
        pid = self._fork() if self.pid is None else self.pid
        start_cpu = cpu_seconds(pid) or 0.0
        if not self.state_sent:
            write_message(self.req, ("state", self.state))
            self.state_sent = True
        write_message(self.req, ("call", request))
        used: float | None = start_cpu
        buf, final, step, step_cpu0, over = bytearray(), None, "start", None, None
        while final is None:
            if select.select([self.rep], [], [], self._wait_s(used, step_cpu0))[0]:
                chunk = os.read(self.rep, 1 << 20)
                if not chunk:
                    break
                buf += chunk
                for msg in frames(buf):
                    if msg[0] == _STEP:
                        step, step_cpu0 = msg[1], msg[2]
                    else:
                        final = msg
            used = cpu_seconds(pid)
            if final is None and used is not None and step_cpu0 is not None and used - step_cpu0 > self.budget_s:
                over = used - step_cpu0
                break
        cpu = max(0.0, (cpu_seconds(pid) or start_cpu) - start_cpu)
        if final is None:  # over budget, or the copy died: a fresh one serves the next call
            self._end(kill=True)
            if over is not None:
                return CallOutcome(CallStatus.OVER_BUDGET, cpu, step, step_cpu_s=round(over, 3))
            return CallOutcome(CallStatus.CRASHED, cpu, step)
        if final[0] == _OSERROR:
            raise OSError(f"in a budgeted call: {final[1]}")
        if final[0] is CallStatus.ERROR:
            return CallOutcome(CallStatus.ERROR, cpu, step, error=final[1])
        return CallOutcome(CallStatus.OK, cpu, value=final[1])
