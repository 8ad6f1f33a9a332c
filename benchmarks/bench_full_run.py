"""One complete ``spare-gen run`` of a config, then ``validate`` and ``audit`` of its output, measured as a user runs them.

Usage: python benchmarks/bench_full_run.py CONFIG OUT [--workers N] [--set KEY=VALUE ...]

This script starts an embedded Dask cluster as ``spare-gen run`` does (one single-threaded worker per core) and runs
the job of ``spare-gen run`` on it in this process (``spare_gen.jobs.regenerate.run`` with this client), so that the
workers' CPU can be asked for: CPU by process kind comes from ``cpu_account.py`` (the client with the scheduler and
the nannies, the Dask workers, their OCCT children). The client's start-up, the imports ``spare-gen run`` does
before its job starts, is measured in a fresh interpreter and counted as client CPU. Printed at the end, and
written to ``OUT.bench.json`` beside the output folder:

- wall time of each command and the machine's load average at its start and end;
- the run's CPU by process kind, the client's share, and the projection from CPU to N workers (the client's CPU
  stays serial: client + the rest / N) for N = 2, 8, 16, 64;
- each stage's units, CPU per unit in its OCCT children (``child_cpu_s`` of ``timings/``) and its slowest units;
- output size and file count, by top-level entry.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu_account import LABELS, PROJECT_WORKERS, SERIAL, CpuMeter  # noqa: E402

from spare_gen.cli import main as spare_gen  # noqa: E402
from spare_gen.config import load_config  # noqa: E402
from spare_gen.jobs import regenerate  # noqa: E402
from spare_gen.runner.cluster import open_client  # noqa: E402
from spare_gen.runner.stage import read_timings  # noqa: E402

SLOWEST = 5


START_UP = "import resource, spare_gen.cli.run; r = resource.getrusage(resource.RUSAGE_SELF); print(r.ru_utime + r.ru_stime)"
BARE = "import resource; r = resource.getrusage(resource.RUSAGE_SELF); print(r.ru_utime + r.ru_stime)"


def _start_up_cpu() -> float:
    """CPU seconds of the imports ``spare-gen run`` does before its job (a fresh interpreter's, minus a bare one's)."""
    def cpu(code: str) -> float:
        return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    cwd=REPO).stdout)
    return max(0.0, min(cpu(START_UP) for _ in range(3)) - min(cpu(BARE) for _ in range(3)))


def _command(meter: CpuMeter, argv: list[str], work=None) -> dict:
    """Run one spare-gen command (or ``work``, its job) in this process; exit code, wall time, load, CPU by kind."""
    load0 = os.getloadavg()
    code = meter.measure(argv[0], 1, "command", work or (lambda: spare_gen(argv)))
    cost = meter.stages[-1]
    return {"argv": argv, "exit": code, "wall_s": cost.wall, "cpu_s": cost.cpu,
            "load_start": [round(x, 2) for x in load0], "load_end": [round(x, 2) for x in os.getloadavg()]}


def _stages(out: Path) -> dict:
    """Per stage with unit timings: units, OCCT child CPU in total and per unit, the slowest units (wall)."""
    stages = {}
    base = out / "timings"
    names = sorted({p.stem if p.is_file() else p.name for p in base.iterdir()}) if base.is_dir() else []
    for name in names:
        rows = read_timings(out, name)
        if not rows:
            continue
        # a three-view cut set's forked attempts are not in its child's own CPU: its "cpu" step counts them
        child = sum(max(float(t.get("child_cpu_s") or 0.0), float((t.get("steps_cpu_s") or {}).get("cpu") or 0.0))
                    for t in rows.values())
        slow = sorted(((uid, float(t.get("task_wall_s") or 0.0)) for uid, t in rows.items()), key=lambda x: -x[1])
        stages[name] = {"units": len(rows), "child_cpu_s": child, "child_cpu_per_unit_s": child / len(rows),
                               "slowest": [[uid, round(s, 2)] for uid, s in slow[:SLOWEST]]}
    return stages


def _size(out: Path) -> dict:
    """Bytes and files per top-level entry of the output folder (hidden resume state included)."""
    sizes: dict[str, list[int]] = {}
    for path in out.rglob("*"):
        if path.is_file() and not path.is_symlink():
            top = path.relative_to(out).parts[0]
            entry = sizes.setdefault(top, [0, 0])
            entry[0] += path.stat().st_size
            entry[1] += 1
    return {k: {"bytes": b, "files": n} for k, (b, n) in sorted(sizes.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("out")
    parser.add_argument("--workers", type=int, default=0, help="embedded workers (default: cores)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    out = Path(args.out)
    sets = [a for kv in args.set for a in ("--set", kv)]
    report: dict = {"config": args.config, "sets": args.set, "cpus": os.cpu_count()}
    with open_client("", args.workers, dashboard=False, quiet=True) as client:
        report["workers"] = len(client.scheduler_info()["workers"])
        meter = CpuMeter(client)
        config = load_config(args.config, [f'out="{out}"', "runner.progress=false", *args.set])

        def run() -> int:
            regenerate.run(config, announce=f"spare-gen: config {args.config}", client=client)
            return 0

        report["run"] = _command(meter, ["run", "-c", args.config, "--out", str(out), *sets], run)
        report["validate"] = _command(meter, ["validate", str(out)])
        report["audit"] = _command(meter, ["audit", str(out)])
    report["stages"] = _stages(out)
    report["output"] = _size(out)
    run = report["run"]
    run["cpu_s"]["client"] += _start_up_cpu()
    total = sum(run["cpu_s"].values())
    serial = sum(run["cpu_s"][k] for k in SERIAL)
    run["total_cpu_s"], run["serial_cpu_s"] = total, serial
    run["projected_min"] = {n: (serial + (total - serial) / n) / 60 for n in PROJECT_WORKERS}
    Path(f"{out}.bench.json").write_text(json.dumps(report, indent=1))

    print(f"\n{args.config} {' '.join(args.set)}: {report['workers']} workers on {os.cpu_count()} CPUs")
    for name in ("run", "validate", "audit"):
        c = report[name]
        cpu = ", ".join(f"{LABELS[k]} {v:.1f} s" for k, v in c["cpu_s"].items() if v >= 0.05)
        print(f"  {name:9s} exit {c['exit']}  wall {c['wall_s']:8.1f} s  load {c['load_start'][0]:.1f} -> "
              f"{c['load_end'][0]:.1f}  CPU: {cpu}")
    print(f"  run CPU {total:.0f} s, client with scheduler {serial:.1f} s (start-up imports included) = "
          f"{100 * serial / total:.2f}% (target <= 2%)")
    print("  projected from CPU: " + ", ".join(f"{n} workers {m:.1f} min" for n, m in run["projected_min"].items()))
    for stage, s in report["stages"].items():
        print(f"  {stage:34s} {s['units']:6d} units, OCCT child CPU {1e3 * s['child_cpu_per_unit_s']:8.1f} ms/unit; "
              f"slowest " + ", ".join(f"{u} {t} s" for u, t in s["slowest"][:3]))
    b = sum(v["bytes"] for v in report["output"].values())
    n = sum(v["files"] for v in report["output"].values())
    print(f"  output {b / 1e6:.1f} MB in {n} files: " + ", ".join(
        f"{k} {v['bytes'] / 1e6:.1f} MB/{v['files']}" for k, v in report["output"].items()))
    print(f"  written {out}.bench.json")


if __name__ == "__main__":
    main()
