"""CPU time of `spare-gen --help`, --version, a bare `spare-gen` and every command's --help (getrusage of the child).

Each is one fresh interpreter (`python -m spare_gen ...`), as a user types it; the figure is the child's user +
system CPU, so a loaded machine stretches the wall clock but not this, and with ``--repeat N`` the median of N such
runs (each command's runs interleaved with the others'). Run from the repository root:

    python benchmarks/bench_help.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command; the median is printed")
    repeat = parser.parse_args().repeat
    child_cpu(["--version"])  # once, to warm the file cache
    print(f"load {os.getloadavg()[0]:.1f}")
    every = (["--help"], ["--version"], [], *([name, "--help"] for name in COMMANDS))
    runs: dict[tuple[str, ...], list[tuple[float, int]]] = {tuple(args): [] for args in every}
    for _ in range(max(1, repeat)):
        for args in every:
            runs[tuple(args)].append(child_cpu(list(args)))
    for args, results in runs.items():
        cpu = statistics.median(c for c, _ in results)
        codes = sorted({code for _, code in results})
        print(f"{'spare-gen ' + ' '.join(args):32s} {cpu:5.2f} s  (exit {', '.join(map(str, codes))})")
    print(f"load {os.getloadavg()[0]:.1f}")

if __name__ == "__main__":
    main()
