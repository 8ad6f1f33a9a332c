"""Child process of IsolatedExecutor: runs ``module:function(**kwargs)`` calls read from stdin.

Replies are ``(Status.OK, value)``, ``(Status.FAILED, text)`` for a failure of the unit (an OSError the input
decided, such as ENAMETOOLONG or EACCES, included), or ``(Status.TRANSIENT, text)`` for a failure of the machine (an
OSError such as ENOSPC or EIO, or MemoryError), which the runner retries.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Any, Callable


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return " ".join(text.split())[:500]


def _die_with_parent() -> None:
    """Linux: be killed when the worker that started this child dies (it runs in its own session)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main() -> None:
    _die_with_parent()
    # The protocol owns the original stdout; OCCT and print() output goes to stderr instead.
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop, and kills

    from spare_gen.runner.isolation import Status, input_caused, read_message, write_message
    from spare_gen.runner.testhooks import fire

    try:  # warm up: most units need OCP
        import spare_gen.cad  # noqa: F401
    except Exception:  # pragma: no cover - reported by the unit that needs it
        pass
    write_message(proto_out, ("ready", None))

    cache: dict[str, Callable[..., Any]] = {}
    while True:
        try:
            target, kwargs, hooks = read_message(proto_in)
        except EOFError:
            return
        try:
            fire(hooks)
            func = cache.get(target)
            if func is None:
                module, name = target.split(":")
                func = cache[target] = getattr(importlib.import_module(module), name)
            reply = (Status.OK, func(**kwargs))
        except OSError as exc:  # the machine's fault (disk full, I/O error): retry, never record; or the input's
            reply = (Status.FAILED if input_caused(exc) else Status.TRANSIENT, _error_text(exc))
        except MemoryError as exc:
            reply = (Status.TRANSIENT, _error_text(exc))
        except Exception as exc:  # any failure of one unit is reported, never fatal
            reply = (Status.FAILED, _error_text(exc))
        write_message(proto_out, reply)


if __name__ == "__main__":
    main()
