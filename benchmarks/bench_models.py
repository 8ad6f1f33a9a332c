"""Model stage throughput and where its CPU goes: models/s on the embedded cluster, CPU per accepted model by part.

Usage: python benchmarks/bench_models.py [COUNT] [--config FILE] [--workers N [N ...]]
       (defaults: 240 models of configs/spare3d_csg.toml, one run with 1 worker and one with 2)

Per run: wall time and models/s (cluster start-up excluded: the cluster is up before the clock starts), and
the CPU seconds per accepted model of every process of the run, measured in that same run:

* in the OCCT child, from the stage's own ``timing`` (``spare_gen.stages.models.child.make_csg_model``): booleans of
  the accepted model, its checks (solids, volume, BRepCheck, statistics), rejected attempts (their booleans and
  checks), STEP write, BREP write, hashing; ``child other`` is the rest of the child's CPU during its calls
  (unpickling, the unit's generator) and ``child start`` its CPU outside calls (importing OCP);
* the Dask worker processes (IPC with the child, Parquet parts, part indexes, Dask itself);
* this process (client and scheduler).

Machines here are shared: check ``uptime`` and compare CPU seconds and ratios within one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from spare_gen.store import shards  # noqa: E402
from spare_gen.config import load_config  # noqa: E402
from spare_gen.stages.models.driver import run_models  # noqa: E402
from spare_gen.runner.cluster import open_client  # noqa: E402
from spare_gen.runner.stage import read_timings  # noqa: E402
from cpu_account import CpuMeter  # noqa: E402

PAPER_MODELS = 12_000  # configs/spare3d_csg.toml: the projections' full scale

TICK = os.sysconf("SC_CLK_TCK")
PHASES = ("build", "check", "rejected", "step", "brep", "hash")


def _processes() -> dict[int, tuple[int, str, float]]:
    """pid -> (parent pid, command line, CPU seconds) of every process readable in /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        found[int(entry)] = (int(fields[1]), cmd, (int(fields[11]) + int(fields[12])) / TICK)
    return found


def cpu_by_role() -> dict[str, float]:
    """CPU seconds so far of this process ("client") and its descendants: OCCT children ("child"), the rest ("dask")."""
    procs = _processes()
    me = os.getpid()
    roles: dict[str, float] = defaultdict(float)
    for pid, (ppid, cmd, cpu) in procs.items():
        ancestor, seen = pid, set()
        while ancestor not in (me, 0, 1) and ancestor in procs and ancestor not in seen:
            seen.add(ancestor)
            ancestor = procs[ancestor][0]
        if pid == me:
            roles["client"] += cpu
        elif ancestor == me:
            roles["child" if "spare_gen.runner.child" in cmd else "dask"] += cpu
    return roles


def one_run(config: str, count: int, workers: int, out: Path) -> dict:
    cfg = load_config(config, [f'out="{out}"', f"models.csg.count={count}", f"runner.workers={workers}",
                               "runner.progress=false", "runner.dashboard=false"])
    with open_client("", workers, dashboard=False, quiet=True) as client:
        client.wait_for_workers(workers)
        meter = CpuMeter(client)
        before = cpu_by_role()
        t0 = time.perf_counter()
        table = meter.measure("models", count, "model", lambda: run_models(client, cfg, out), PAPER_MODELS)
        wall = time.perf_counter() - t0
        after = cpu_by_role()
    rows = shards.read(table, ["status", "rejections", "attempts"]).to_pylist()
    return {"workers": workers, "wall": wall, "rows": rows, "timings": read_timings(out, "models"),
            "cpu": {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}, "meter": meter}


def report(run: dict, count: int) -> None:
    ok = sum(r["status"] == "ok" for r in run["rows"]) or 1
    phases: dict[str, float] = defaultdict(float)
    unit_cpu = 0.0
    for t in run["timings"].values():
        unit_cpu += t.get("child_cpu_s", 0.0)
        for k, v in (t.get("steps_cpu_s") or {}).items():
            phases[k] += v
    cpu = run["cpu"]
    child_other = unit_cpu - sum(phases.values())
    parts = [*((k, phases.get(k, 0.0)) for k in PHASES), ("child other", child_other),
             ("child start", cpu.get("child", 0.0) - unit_cpu), ("dask workers", cpu.get("dask", 0.0)),
             ("client+scheduler", cpu.get("client", 0.0))]
    total = sum(v for _, v in parts)
    print(f"{run['workers']} worker(s): {run['wall']:6.2f} s wall, {count / run['wall']:5.1f} models/s; "
          f"CPU {1000 * total / ok:.1f} ms per accepted model ({total:.1f} s)")
    for name, v in parts:
        print(f"    {name:17s} {1000 * v / ok:7.1f} ms  {100 * v / max(total, 1e-9):5.1f}%")
    print(f"  by getrusage of each process kind, projected to {PAPER_MODELS} models:")
    for line in run["meter"].lines(run["workers"]):
        print(f"  {line}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("count", nargs="?", type=int, default=240)
    ap.add_argument("--config", default=str(REPO / "configs" / "spare3d_csg.toml"))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in args.workers:
            runs.append(one_run(args.config, args.count, w, Path(tmp) / f"w{w}"))
            report(runs[-1], args.count)
    if len(runs) > 1:
        print(f"speed-up {runs[0]['workers']} -> {runs[-1]['workers']} workers: {runs[0]['wall'] / runs[-1]['wall']:.2f}x")
    rows = runs[-1]["rows"]
    rejected: Counter[str] = Counter()
    for r in rows:
        rejected.update(json.loads(r["rejections"] or "{}"))
    attempts = sum(r["attempts"] or 0 for r in rows)
    print(f"CSG attempts {attempts}, rejected {sum(rejected.values())} "
          f"({100 * sum(rejected.values()) / max(attempts, 1):.0f}%): {dict(sorted(rejected.items()))}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
