"""Terminal manners of the command line: a closed pipe or a Ctrl-C ends it in one line, never a traceback; progress
bars on a terminal only, plain periodic lines in a pipe or a log."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable, TextIO

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a tool killed by a closed pipe reports it
INTERRUPTED = "spare-gen: interrupted"
PLAIN_EVERY_S = 30.0  # a pipe or a log gets a progress line at most this often (and one at the end)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # a Ctrl-C; a batch scheduler's or ``kill``'s stop


class Stopped(KeyboardInterrupt):
    """A Ctrl-C (SIGINT) or a SIGTERM (a scheduler, ``kill``) stopping the command; a KeyboardInterrupt, so every
    cleanup that handles Ctrl-C handles both."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        _STOPPED_BY.append(signum)


RESEND_STOP_S = 0.05  # how long after a swallowed stop its signal is sent again
_STOPPED_BY: list[int] = []  # the signals a Stopped was raised for, in this process


def stopped_by() -> int | None:
    """The signal that stopped the command, when a Stopped was raised: a library may catch it and raise its own
    error instead (pydantic wraps an exception raised inside a serializer in a ValueError), and that error must
    still end the command as a stop, not as bad input."""
    return _STOPPED_BY[0] if _STOPPED_BY else None


def stop_line(signum: int) -> str:
    """How a stop by ``signum`` is said: ``spare-gen: interrupted`` (Ctrl-C) or ``spare-gen: stopped by SIGTERM``."""
    return INTERRUPTED if signum == signal.SIGINT else f"spare-gen: stopped by {signal.Signals(signum).name}"


def _exit_at_once(signum, frame) -> None:
    """A Ctrl-C or a SIGTERM while the command starts (imports, parsing): nothing to clean up yet."""
    try:
        os.write(2, f"{stop_line(signum)}\n".encode())
    finally:
        os._exit(128 + signum)


def _raise_stopped(signum, frame) -> None:
    raise Stopped(signum)


def _stop_again(unraisable) -> None:
    """``sys.unraisablehook`` while a command runs: a stop raised where Python cannot raise (inside a gc callback or a
    ``__del__``, as Dask's gc diagnosis is) would be swallowed ("Exception ignored in ...") and the command would run
    on to the end; its signal is sent again a moment later, from a thread, so that it lands in the command's own code
    (raised here, it would be swallowed too)."""
    exc = unraisable.exc_value
    if not isinstance(exc, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)
        return
    signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
    threading.Timer(RESEND_STOP_S, os.kill, (os.getpid(), signum)).start()


def is_the_command(argv0: str) -> bool:
    """True when the process is ``spare-gen`` itself: its console script, ``python -m spare_gen.cli`` (``-m`` while
    the package is imported) or ``python -m spare_gen``; never a multiprocessing child it spawned (an embedded Dask
    worker re-imports the console script with the parent's ``sys.argv``: it must keep ignoring a Ctrl-C to the
    process group, or each worker would say ``interrupted`` too)."""
    if "--multiprocessing-fork" in getattr(sys, "orig_argv", ()):
        return False
    path = Path(argv0)
    return path.name == "spare-gen" or argv0 == "-m" or (path.name == "__main__.py"
                                                           and path.parent.name in ("spare_gen", "cli"))


def guard_startup() -> None:
    """Until ``run_command`` takes over, a Ctrl-C or a SIGTERM ends the process at once with one line (imports take
    seconds on a busy machine)."""
    for s in STOP_SIGNALS:
        signal.signal(s, _exit_at_once)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's own flush at exit does not hit the closed pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (captured in-process): nothing to flush
        pass
    finally:
        os.close(devnull)


def run_command(command: Callable[[], int]) -> int:
    """Run ``command`` with Ctrl-C raising KeyboardInterrupt again; a Ctrl-C or a reader that closed the pipe
    (``spare-gen config | head``) ends it with one line (none for the pipe) and the shell's exit code."""
    if signal.getsignal(signal.SIGINT) is _exit_at_once:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is _exit_at_once:  # a SIGTERM, too, stops it with one line
        signal.signal(signal.SIGTERM, _raise_stopped)
    hook, sys.unraisablehook = sys.unraisablehook, _stop_again
    try:
        code = command()
        sys.stdout.flush()  # inside the try: a closed pipe shows here, not at exit
        return code
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
        print(stop_line(signum), file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    finally:
        sys.unraisablehook = hook



class PlainProgress:
    """Progress for a pipe or a log file: ``spare-gen: <what>: <n>/<total> <unit>s (<s> s)`` at most every
    PLAIN_EVERY_S seconds and once at the end, never a carriage return; nothing when ``enabled`` is false. A line
    comes every PLAIN_EVERY_S seconds also while no unit ends (a stage whose units finish in one batch): a log is
    never silent that long. The part of tqdm's interface the commands use (``update``, ``set_postfix``, ``write``,
    ``close``)."""

    def __init__(self, total: int, desc: str, unit: str, initial: int = 0, file: TextIO | None = None,
                 enabled: bool = True, every_s: float = PLAIN_EVERY_S):
        self.total, self.desc, self.unit, self.n = total, desc, unit, initial
        self.file, self.enabled, self.every_s = file, enabled, every_s
        self.started = self.said = time.monotonic()
        self.said_n = initial
        self.postfix = ""
        self._closed, self._lock = threading.Event(), threading.Lock()
        if enabled:
            threading.Thread(target=self._heartbeat, name=f"progress {desc}", daemon=True).start()

    def _heartbeat(self) -> None:
        """While open: a line whenever ``every_s`` (at least a second) passed without one."""
        while not self._closed.wait(max(1.0, self.said + self.every_s - time.monotonic())):
            if self.every_s >= 1 and time.monotonic() - self.said >= self.every_s:
                self._say()

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.monotonic() - self.said >= self.every_s:
            self._say()

    def set_postfix(self, **values) -> None:
        """Shown after the count on the next line said (e.g. a training step's epoch and loss)."""
        self.postfix = ", ".join(f"{k}={v}" for k, v in values.items())

    def write(self, line: str, file: TextIO | None = None) -> None:
        """A line of its own (as a terminal's bar writes one above itself)."""
        print(line, file=file or self.file or sys.stderr, flush=True)

    def close(self) -> None:
        self._closed.set()
        if self.n != self.said_n:
            self._say()

    def _say(self) -> None:
        with self._lock:
            self.said, self.said_n = time.monotonic(), self.n
            if self.enabled:
                postfix = f", {self.postfix}" if self.postfix else ""
                print(f"spare-gen: {self.desc}: {self.n}/{self.total} {self.unit}s ({self.said - self.started:.0f} s"
                      f"{postfix})", file=self.file or sys.stderr, flush=True)


def progress(total: int, desc: str, unit: str, enabled: bool = True, initial: int = 0, file: TextIO | None = None):
    """A tqdm bar when ``file`` (default stderr) is a terminal, else a PlainProgress (no ``\\r`` in pipes and logs)."""
    stream = file or sys.stderr
    if enabled and stream.isatty():
        from tqdm.auto import tqdm

        return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=stream, dynamic_ncols=True)
    return PlainProgress(total, desc, unit, initial, stream, enabled)
