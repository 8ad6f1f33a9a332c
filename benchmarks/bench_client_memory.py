"""Client memory of a table-writing stage from 1,000 to 20,000 models: flat, because workers write the parts.

Usage: python benchmarks/bench_client_memory.py [N ...]   (default 1000 5000 20000)

Each N runs in a fresh client process (peak RSS only grows) against a real ``dask scheduler`` process with two
``dask worker`` processes (so the client's RSS is the client's alone, as on a cluster), through
the real stage runner (``spare_gen.runner.sharded.run_sharded_stage``: shards, parts, index files), with a
cheap pure-Python unit task in place of OpenCASCADE: per model, 11 views.parquet-like rows with polylines of
a typical size (~1,100 points per model, as the drawing stage makes for a CSG model). It prints the client's
peak RSS (``ru_maxrss``) after the stage and after reading one column of the table back, the ratio
against the smallest N, and the output and resume-data sizes. For comparison it also runs the same units
through the per-unit runner that returns every row to the client (``spare_gen.runner.stage.run_stage``,
what every stage did before), with ``--rows-to-client``.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from cpu_account import KINDS, LABELS, PROJECT_WORKERS, SERIAL, cpu_now

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # workers

SCHEMA = pa.schema([("model_id", pa.string()), ("view", pa.string()), ("status", pa.string()),
                    ("visible", pa.list_(pa.list_(pa.list_(pa.float32(), 2)))),
                    ("hidden", pa.list_(pa.list_(pa.list_(pa.float32(), 2))))])
VIEWS = ("f", "t", "r", *[f"iso_{i}" for i in range(8)])


def fake_views(unit: dict, settings):
    """A drawing stage result: 11 views of 20 polylines of 5 points each (~1,100 points per model)."""
    from spare_gen.stages.drawings.schema import DrawingRow
    from spare_gen.stages.drawings.settings import DrawResult

    rng = settings.unit_rng(unit["unit_id"])
    views = []
    for view in VIEWS:
        lines = rng.uniform(0, 200, size=(20, 5, 2)).round(2).tolist()
        views.append({"model_id": unit["model_id"], "view": view, "status": "ok",
                      "visible": lines[:14], "hidden": lines[14:]})
    return DrawResult(row=DrawingRow(model_id=unit["model_id"], status="ok"), views=views)


def view_rows(result) -> list[dict]:
    return result.views


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


@contextlib.contextmanager
def cluster_address():
    """A ``dask scheduler`` process and a ``dask worker`` process with 2 single-threaded workers."""
    with tempfile.TemporaryDirectory() as tmp:
        sched = Path(tmp) / "scheduler.json"
        logs = open(Path(tmp) / "log", "w")
        procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                   "--port", "0", "--dashboard-address", ":0", "--scheduler-file", str(sched)],
                                  stdout=logs, stderr=subprocess.STDOUT, start_new_session=True)]
        try:
            deadline = time.monotonic() + 60
            while not sched.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            address = json.loads(sched.read_text())["address"]
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads",
                                           "1", "--nworkers", "2", "--host", "127.0.0.1", "--no-dashboard"],
                                          stdout=logs, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT))
            yield address
        finally:
            for p in reversed(procs):
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=60)


def one(n: int, rows_to_client: bool) -> dict:
    from distributed import Client

    from spare_gen.config import load_config
    from spare_gen.runner.contract import RunOptions
    from spare_gen.stages.drawings.settings import DrawSettings
    from spare_gen.runner.sharded import TableOut, run_sharded_stage
    from spare_gen.runner.stage import run_stage
    from spare_gen.store.shards import read

    units = [{"unit_id": f"m{i:07d}", "model_id": f"m{i:07d}"} for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp, cluster_address() as address, Client(address) as client:
        client.wait_for_workers(2, timeout=60)
        out = Path(tmp)
        settings = DrawSettings.from_config(load_config(None, []), out)  # the drawing stage's results, faked
        start_rss, t0 = rss_mb(), time.monotonic()
        before = cpu_now(client)
        if rows_to_client:
            results = run_stage(client, fake_views, units, settings, RunOptions(progress=False))
            table = pa.Table.from_pylist([v for r in results for v in r.views], schema=SCHEMA)
            n_rows = table.num_rows
        else:
            run_sharded_stage(client, fake_views, units, settings, (TableOut("views.parquet", SCHEMA, view_rows),),
                              RunOptions(shard_units=32, progress=False))
            n_rows = read(out / "views.parquet", ["view"]).num_rows
        seconds, stage_rss = time.monotonic() - t0, rss_mb()
        after = cpu_now(client)
        resume = folder_mb(out / ".units")
        output = folder_mb(out) - resume
    return {"n": n, "rows": n_rows, "seconds": round(seconds, 1), "rss_before_mb": round(start_rss, 1),
            "stage_rss_mb": round(stage_rss, 1),
            "peak_rss_mb": round(rss_mb(), 1), "output_mb": round(output, 1), "resume_mb": round(resume, 2),
            "cpu_ms_per_model": {k: round(1e3 * (after[k] - before[k]) / n, 3) for k in KINDS if after[k] > before[k]}}


def main(argv: list[str]) -> None:
    if argv and argv[0] == "--one":
        print(json.dumps(one(int(argv[1]), argv[2] == "client")))
        return
    rows_to_client = "--rows-to-client" in argv
    sizes = [int(a) for a in argv if a.isdigit()] or [1000, 5000, 20000]
    print(f"load: {os.getloadavg()[0]:.2f} (1 min); 2 workers; shard of 32 models; "
          f"{'rows returned to the client (per-unit runner)' if rows_to_client else 'workers write parts'}")
    first = None
    for n in sizes:
        proc = subprocess.run([sys.executable, __file__, "--one", str(n), "client" if rows_to_client else "parts"],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            sys.exit(f"{n} models: the client process failed:\n{proc.stderr[-3000:]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        first = first or res
        print(f"  {n:6d} models ({res['rows']:7d} view rows) in {res['seconds']:6.1f} s: client peak RSS after the "
              f"stage {res['stage_rss_mb']:7.1f} MB ({res['stage_rss_mb'] / first['stage_rss_mb']:.2f}x the "
              f"{first['n']}-model run), after reading a column back {res['peak_rss_mb']:7.1f} MB "
              f"({res['peak_rss_mb'] / first['peak_rss_mb']:.2f}x); "
              f"output {res['output_mb']:7.1f} MB, resume data {res['resume_mb']:.2f} MB "
              f"({100 * res['resume_mb'] / max(res['output_mb'], 1e-9):.2f}%)")
        cpu = res["cpu_ms_per_model"]
        serial, rest = sum(cpu.get(k, 0.0) for k in SERIAL), sum(v for k, v in cpu.items() if k not in SERIAL)
        print("         CPU ms per model: " + ", ".join(f"{LABELS[k]} {v:.3f}" for k, v in cpu.items())
              + "; projected to 12,000 models, min on N workers: "
              + "  ".join(f"{w}: {12_000 * (serial + rest / w) / 6e4:.2f}" for w in PROJECT_WORKERS))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
