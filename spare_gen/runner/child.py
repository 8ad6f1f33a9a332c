"""Child process of IsolatedExecutor: runs ``module:function(**kwargs)`` calls read from stdin."""

from __future__ import annotations

import importlib
import os
import sys


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return " ".join(text.split())[:500]


def main() -> None:
    # The protocol owns the original stdout; OCCT and print() output goes to stderr instead.
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr

    from spare_gen.runner.isolation import read_message, write_message

    try:  # warm up: most units need OCP
        import spare_gen.cad  # noqa: F401
    except Exception:  # pragma: no cover - reported by the unit that needs it
        pass

    cache: dict[str, object] = {}
    while True:
        try:
            target, kwargs = read_message(proto_in)
        except EOFError:
            return
        try:
            func = cache.get(target)
            if func is None:
                module, name = target.split(":")
                func = cache[target] = getattr(importlib.import_module(module), name)
            reply = ("ok", func(**kwargs))
        except Exception as exc:  # any failure of one unit is reported, never fatal
            reply = ("error", _error_text(exc))
        write_message(proto_out, reply)


if __name__ == "__main__":
    main()
