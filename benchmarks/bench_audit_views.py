"""CPU seconds the view-aware probes add to `spare-gen audit`, interleaved with the question-blind probes.

In one process, round by round: the question-blind probes alone (``audit`` with the view-aware section left out),
then the view-aware probes alone (``view_aware``), then the whole audit; the CPU seconds of each (time.process_time,
BLAS and OpenMP on one thread as in the audit) and the view-aware share. The first round also pays the imports
(sklearn for the view-aware probes), so it is printed apart. Run from the repository root on a dataset, e.g. the
default config's output:

    spare-gen run --out /tmp/bench-default
    python benchmarks/bench_audit_views.py /tmp/bench-default --rounds 3
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from spare_gen.audit import probes
from spare_gen.audit.learnability import view_aware
from spare_gen.audit.text import view_aware_line
from spare_gen.data.tables import available_tasks


def cpu(fn) -> tuple[float, object]:
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def blind_only(out: Path, seed: int) -> dict:
    """The audit without its view-aware section (the probes before it)."""
    saved = probes.view_aware
    probes.view_aware = lambda *args, **kw: None
    try:
        return probes.audit(out, seed)
    finally:
        probes.view_aware = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a dataset folder (after spare-gen run)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tasks = [t for t in available_tasks(args.out) if t in probes.MULTIPLE_CHOICE]
    print(f"load at start {os.getloadavg()[0]:.1f}")
    for i in range(args.rounds):
        blind_s, _ = cpu(lambda: blind_only(args.out, args.seed))
        views_s, section = cpu(lambda: view_aware(args.out, tasks, args.seed))
        whole_s, report = cpu(lambda: probes.audit(args.out, args.seed))
        label = "round 1 (imports included)" if i == 0 else f"round {i + 1}"
        print(f"{label}: question-blind {blind_s:.2f} s, view-aware {views_s:.2f} s "
              f"({100 * views_s / blind_s:.0f} % added), whole audit {whole_s:.2f} s")
    for r in section["results"]:
        print("  " + view_aware_line(r))
    assert report["view_aware"] == section  # the audit's own section is the one timed alone
    print(f"load at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
