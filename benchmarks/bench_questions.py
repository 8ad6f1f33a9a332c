"""Question-stage throughput: questions per second per task, and the share of time in booleans, HLR and writing.

Usage: python benchmarks/bench_questions.py [--config configs/default.toml] [--out DIR] [--workers 2]

Builds the models and drawings once (not timed here), then runs the question stage from scratch
(its unit cache removed) on an embedded cluster, measuring the CPU of every process kind (``cpu_account.py``)
and projecting it to the paper config's question counts, then reads ``questions/timings.json``. Per task, the
wall time covers its Dask rounds; the unit steps are CPU seconds summed over units (child processes), the
driver's parts wall seconds in the client. Also the slowest units (``read_timings(out, "questions_<task>")``)
and, for units that report their total CPU (three_view_to_isometric: ``steps_cpu_s.cpu``), CPU seconds per
question, which depend far less on other load on the machine than the wall time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from spare_gen.jobs.regenerate import run
from spare_gen.config import load_config
from spare_gen.runner.cluster import open_client
from spare_gen.runner.stage import read_timings

from cpu_account import CpuMeter

SLOWEST = 5
PART_GROUPS = {"boolean": ("boolean",), "hlr": ("hlr",), "render+write": ("render_write",), "step": ("step",),
               "tessellate+sample": ("tessellate", "sample")}


def _unit_report(out: Path, tasks: dict) -> dict:
    """Per task: the slowest units (wall s, and CPU s where the unit reports it) and CPU s per question."""
    report = {}
    for task, t in tasks.items():
        rows = read_timings(out, f"questions_{task}")
        if not rows or not t["questions"]:
            continue
        walls = sorted(((float(r.get("task_wall_s", r.get("child_wall_s", 0.0))), uid) for uid, r in rows.items()),
                       reverse=True)
        cpu = {uid: float((r.get("steps_cpu_s") or {}).get("cpu", 0.0)) for uid, r in rows.items()}
        total_cpu = sum(cpu.values())
        report[task] = {"slowest_wall_s": [(uid, round(w, 2), round(cpu[uid], 2)) for w, uid in walls[:SLOWEST]],
                        "cpu_s_per_question": round(total_cpu / t["questions"], 3) if total_cpu else None}
        print(f"\n{task}: slowest units (id, wall s, CPU s): {report[task]['slowest_wall_s']}")
        if total_cpu:
            print(f"{task}: CPU s per question (units' own + forked, summed / questions): "
                  f"{report[task]['cpu_s_per_question']}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/default.toml")
    parser.add_argument("--out", default=None, help="dataset folder (default: a temporary one)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="bench_questions_")) / "dataset"
    cfg = load_config(args.config, [f'out="{out}"', f"runner.workers={args.workers}", "runner.progress=false",
                                    "runner.dashboard=false", "pool.enabled=false"])
    t0 = time.monotonic()
    if not (out / "drawings.parquet").exists():
        run(cfg, stages=("models", "drawings"))
    upstream = time.monotonic() - t0
    for stale in (out / ".units").glob("questions_*"):
        shutil.rmtree(stale)
    from spare_gen.stages.questions.driver import run_questions

    paper = load_config("configs/spare3d_csg.toml")
    n_questions = sum(cfg.questions.counts.values())
    with open_client("", args.workers, dashboard=False, quiet=True) as client:
        meter = CpuMeter(client)
        t0 = time.monotonic()
        meter.measure("questions", n_questions, "question", lambda: run_questions(client, cfg, out),
                      sum(paper.questions.counts.values()))
        stage_wall = time.monotonic() - t0
    timings = json.loads((out / "questions" / "timings.json").read_text())

    print(f"\nmodels + drawings: {upstream:.1f} s (not part of the numbers below); workers {args.workers}")
    print(f"question stage wall time: {stage_wall:.1f} s; CPU by process kind, projected to the paper config's "
          f"{sum(paper.questions.counts.values())} questions:")
    for line in meter.lines(args.workers):
        print(line)
    print()
    print(f"{'task':28s} {'questions':>9s} {'models':>7s} {'wall s':>8s} {'q/s':>8s}")
    totals = {g: 0.0 for g in PART_GROUPS}
    for task, t in timings["tasks"].items():
        qps = t["questions_per_wall_s"] if t["wall_s"] >= 0.01 else None  # no per-model work
        print(f"{task:28s} {t['questions']:9d} {t['models_processed']:7d} {t['wall_s']:8.2f} "
              f"{f'{qps:8.2f}' if qps is not None else '     n/a'}")
        for group, keys in PART_GROUPS.items():
            totals[group] += sum(t["unit_steps_cpu_s"].get(k, 0.0) for k in keys)
    driver = timings["driver_wall_s"]
    totals["driver write (parquet, manifest hashes)"] = driver.get("write", 0.0)
    totals["card + contact sheets"] = driver.get("card", 0.0) + driver.get("preview", 0.0)
    busy = sum(totals.values())
    print(f"\ntime by part (unit steps: CPU s summed over units; driver parts: wall s in the client): {busy:.2f} s")
    for part, seconds in totals.items():
        print(f"  {part:40s} {seconds:8.2f} s  {100 * seconds / busy if busy else 0:5.1f} %")
    units = _unit_report(out, timings["tasks"])
    print(json.dumps({"workers": args.workers, "units": units, "stage_wall_seconds": round(stage_wall, 2), "parts": totals,
                      "tasks": timings["tasks"]}, indent=1, sort_keys=True), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
