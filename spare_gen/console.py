"""Terminal manners of the command line: a closed pipe or a Ctrl-C ends it in one line, never a traceback."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Callable

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a tool killed by a closed pipe reports it
INTERRUPTED = "spare-gen: interrupted"


def _exit_at_once(signum, frame) -> None:
    """Ctrl-C while the command starts (imports, parsing): nothing to clean up yet."""
    try:
        os.write(2, f"{INTERRUPTED}\n".encode())
    finally:
        os._exit(EXIT_INTERRUPTED)


def is_the_command(argv0: str) -> bool:
    """True when the process is ``spare-gen`` itself: its console script, ``python -m spare_gen.cli`` (``-m`` while
    the package is imported) or ``python -m spare_gen``."""
    path = Path(argv0)
    return path.name == "spare-gen" or argv0 == "-m" or (path.name == "__main__.py"
                                                           and path.parent.name in ("spare_gen", "cli"))


def guard_startup() -> None:
    """Until ``run_command`` takes over, a Ctrl-C ends the process at once with one line (imports take a second)."""
    signal.signal(signal.SIGINT, _exit_at_once)


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
    try:
        code = command()
        sys.stdout.flush()  # inside the try: a closed pipe shows here, not at exit
        return code
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE

