"""Wall time and CPU of ``spare-gen metric-report`` on a fixed set of GT wireframes (issue 11: 126 in <= 60 s).

Usage: ``python benchmarks/bench_metric_report.py OUT [--models 126] [--workers 0] [--profile K] [--dest DIR]``.

OUT is an output folder with ``wireframes.parquet`` (and ``models.parquet`` to extract more when the pool holds
fewer than ``--models``). The set is built once into ``DEST/wireframes.parquet`` (default
``OUT/bench_metric_report``), so every later run times the metric work alone on the same wireframes. The report
then runs on an embedded cluster of ``--workers`` processes: wall time, the CPU seconds of the worker processes,
the load average before and after, the SHA-256 of the Markdown and Parquet reports (same input, same bytes), the
parallel efficiency and how many workers 60 s would take at that CPU (``metric-report --scheduler`` runs it on a
cluster). ``--profile K`` also times, in this process with one BLAS thread (as a Dask worker runs), every test of the
largest wireframe and of K others spread over the edge-count ranks: CPU seconds per model, the cylinder IoU's share,
and what the report would still take on these workers were that metric free.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import resource
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

TARGET_S = 60.0  # issue 11: 126 wireframes in 60 s


def build_set(out_dir: Path, dest: Path, count: int) -> int:
    """Write ``count`` GT wireframes (the pool's, topped up from the models) to ``dest/wireframes.parquet``."""
    from spare_gen.jobs.metric_report import extra_wireframes, load_wireframes
    from spare_gen.runner.cluster import open_client

    path = dest / "wireframes.parquet"
    if path.exists() and len(load_wireframes(path)[0]) >= count:
        return count
    ids, wireframes = load_wireframes(out_dir / "wireframes.parquet")
    ids, wireframes = ids[:count], wireframes[:count]
    tried = [str(m) for m in pq.read_table(out_dir / "wireframes.parquet", columns=["model_id"])["model_id"].to_pylist()]
    with open_client(workers=0, dashboard=False, quiet=True) as client:
        while len(ids) < count:  # models whose extraction fails are skipped, never tried twice
            more_ids, more = extra_wireframes(out_dir, tried, count - len(ids), client)
            attempted = extra_attempts(out_dir, tried, count - len(ids))
            if not attempted:
                break
            tried += attempted
            ids, wireframes = ids + more_ids, wireframes + more
    dest.mkdir(parents=True, exist_ok=True)
    rows = [{"model_id": m, "status": "ok", **w.to_row()} for m, w in zip(ids, wireframes)]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return len(rows)


def extra_attempts(out_dir: Path, have: list[str], count: int) -> list[str]:
    """Ids of the next ``count`` usable models not in ``have`` (what :func:`extra_wireframes` tries)."""
    from spare_gen.stages.pool.driver import pool_models

    known = set(have)
    return [m["model_id"] for m in pool_models(out_dir, 0) if m["model_id"] not in known][:count]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_report(dest: Path, count: int, workers: int) -> tuple[float, int]:
    """One metric-report run on the set; wall, worker CPU, load and report hashes. Returns (worker CPU, workers)."""
    from cpu_account import CpuMeter
    from spare_gen.jobs.metric_report import run
    from spare_gen.runner.cluster import open_client

    load_before = os.getloadavg()
    cpu0 = children_cpu()
    with open_client(workers=workers, dashboard=False, quiet=True) as client:
        meter = CpuMeter(client)
        start = time.perf_counter()
        result = meter.measure("metric-report", count, "wireframe", lambda: run(dest, models=count, client=client,
                                                                                 quiet=True), 126)
        wall = time.perf_counter() - start
    cpu = children_cpu() - cpu0  # worker processes, counted once the cluster has closed them
    for line in meter.lines(workers or os.cpu_count() or 1):
        print(line)
    digests = {Path(p).name: hashlib.sha256(Path(p).read_bytes()).hexdigest()[:16]
               for p in (result["markdown_path"], result["parquet_path"])}
    print(f"metric-report: {result['n_models']} wireframes, {workers or os.cpu_count()} workers: wall {wall:.1f} s, "
          f"worker CPU {cpu:.1f} s ({cpu / max(1, result['n_models']):.2f} s per model); load average "
          f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    print("report sha256:", ", ".join(f"{k} {v}" for k, v in digests.items()))
    n_workers = workers or os.cpu_count() or 1
    efficiency = cpu / max(1e-9, wall * n_workers)  # share of the workers' wall time spent computing
    needed = math.ceil(cpu / (TARGET_S * max(efficiency, 1e-9)))
    print(f"parallel efficiency {efficiency:.0%}; at this CPU per model and efficiency, {TARGET_S:.0f} s for "
          f"{result['n_models']} wireframes needs {needed} workers (spare-gen metric-report --scheduler tcp://...)")
    return cpu, n_workers


def profile_models(dest: Path, k: int, worker_cpu: float, workers: int) -> None:
    """CPU seconds of every test on the largest wireframe and on ``k`` others spread over the edge counts, and the
    share of the cylinder IoU: what the report (``worker_cpu`` CPU seconds measured) would cost on ``workers``
    workers if that metric were free."""
    from threadpoolctl import threadpool_limits

    from spare_gen.jobs.metric_report import load_wireframes
    from spare_gen.metrics import perturbations as P
    from spare_gen.metrics import catalog as W
    from spare_gen.metrics.properties import model_cases

    ids, wireframes = load_wireframes(dest / "wireframes.parquet")
    gts = [P.normalise(w) for w in wireframes]
    order = sorted(range(len(gts)), key=lambda i: -gts[i].n_edges)
    picks = [order[0]] + [order[round(j * (len(order) - 1) / k)] for j in range(1, k + 1)] if k else [order[0]]
    names = W.get_metric_names()
    iou_cpu = [0.0]
    cylinder = W.METRIC_FAMILIES["cylinder"]

    def timed_cylinder(pred, gt):
        start = time.process_time()
        try:
            return cylinder(pred, gt)
        finally:
            iou_cpu[0] += time.process_time() - start

    W.METRIC_FAMILIES["cylinder"] = timed_cylinder
    totals, rest = 0.0, 0.0
    try:
        with threadpool_limits(1):
            for i in dict.fromkeys(picks):
                start, iou0 = time.process_time(), iou_cpu[0]
                model_cases(i, gts, names, 0)
                cpu, iou = time.process_time() - start, iou_cpu[0] - iou0
                totals, rest = totals + cpu, rest + cpu - iou
                print(f"  {ids[i]}: {gts[i].n_edges} edges, {cpu:.2f} s CPU ({iou / cpu:.0%} cylinder IoU)")
    finally:
        W.METRIC_FAMILIES["cylinder"] = cylinder
    if totals > 0:
        print(f"  cylinder IoU {1 - rest / totals:.0%} of the profiled CPU; with it free, the other metrics alone would "
              f"still take about {worker_cpu * rest / totals / workers:.0f} s on {workers} workers (target {TARGET_S:.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--models", type=int, default=126)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--profile", type=int, default=None, help="also time K models in-process (CPU per model)")
    parser.add_argument("--dest", type=Path, default=None)
    args = parser.parse_args()
    dest = args.dest or args.out_dir / "bench_metric_report"
    count = build_set(args.out_dir, dest, args.models)
    print(f"set: {count} GT wireframes in {dest / 'wireframes.parquet'}")
    worker_cpu, n_workers = time_report(dest, count, args.workers)
    if args.profile is not None:
        profile_models(dest, args.profile, worker_cpu, n_workers)


if __name__ == "__main__":
    main()
