"""CPU time of `spare-gen --help`, --version, a bare `spare-gen` and every command's --help (getrusage of the child).

Each is one fresh interpreter (`python -m spare_gen ...`), as a user types it; the figure is the child's user +
system CPU, so a loaded machine stretches the wall clock but not this. Run from the repository root:

    python benchmarks/bench_help.py
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from spare_gen.cli import COMMANDS


def child_cpu(args: list[str]) -> tuple[float, int]:
    """CPU seconds of one `python -m spare_gen ARGS` and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "spare_gen", *args], capture_output=True,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.returncode


def main() -> None:
    child_cpu(["--version"])  # once, to warm the file cache
    for args in (["--help"], ["--version"], [], *([name, "--help"] for name in COMMANDS)):
        cpu, code = child_cpu(args)
        print(f"{'spare-gen ' + ' '.join(args):32s} {cpu:5.2f} s  (exit {code})")

if __name__ == "__main__":
    main()
