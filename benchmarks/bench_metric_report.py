"""Wall time and CPU of ``spare-gen metric-report`` on a fixed set of GT wireframes (issue 11: 126 in <= 60 s).

Usage: ``python benchmarks/bench_metric_report.py OUT [--models 126] [--workers 0] [--profile K] [--dest DIR]``.

OUT is an output folder with ``wireframes.parquet`` (and ``models.parquet`` to extract more when the pool holds
fewer than ``--models``). The set is built once into ``DEST/wireframes.parquet`` (default
``OUT/bench_metric_report``), so every later run times the metric work alone on the same wireframes. The report
then runs on an embedded cluster of ``--workers`` processes: wall time, the CPU seconds of the worker processes,
the load average before and after, and the SHA-256 of the Markdown and Parquet reports (same input, same bytes).
``--profile K`` also times, in this process with one BLAS thread (as a Dask worker runs), every test of the
largest wireframe and of K others spread over the edge-count ranks: CPU seconds per model.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def build_set(out_dir: Path, dest: Path, count: int) -> int:
    """Write ``count`` GT wireframes (the pool's, topped up from the models) to ``dest/wireframes.parquet``."""
    from pipelines.metric_report import extra_wireframes, load_wireframes
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
    from spare_gen.wireframes.driver import pool_models

    known = set(have)
    return [m["model_id"] for m in pool_models(out_dir, 0) if m["model_id"] not in known][:count]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_report(dest: Path, count: int, workers: int) -> None:
    """One metric-report run on the set; wall, worker CPU, load and report hashes."""
    from pipelines.metric_report import run

    load_before = os.getloadavg()
    cpu0, start = children_cpu(), time.perf_counter()
    result = run(dest, models=count, workers=workers, quiet=True)
    wall = time.perf_counter() - start
    cpu = children_cpu() - cpu0  # worker processes, counted once the cluster has closed them
    digests = {Path(p).name: hashlib.sha256(Path(p).read_bytes()).hexdigest()[:16]
               for p in (result["markdown_path"], result["parquet_path"])}
    print(f"metric-report: {result['n_models']} wireframes, {workers or os.cpu_count()} workers: wall {wall:.1f} s, "
          f"worker CPU {cpu:.1f} s ({cpu / max(1, result['n_models']):.2f} s per model); load average "
          f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    print("report sha256:", ", ".join(f"{k} {v}" for k, v in digests.items()))


def profile_models(dest: Path, k: int) -> None:
    """CPU seconds of every test on the largest wireframe and on ``k`` others spread over the edge counts."""
    from threadpoolctl import threadpool_limits

    from pipelines.metric_report import load_wireframes
    from spare_gen.metrics import perturbations as P
    from spare_gen.metrics.properties import model_cases
    from spare_gen.metrics.wireframe import get_metric_names

    ids, wireframes = load_wireframes(dest / "wireframes.parquet")
    gts = [P.normalise(w) for w in wireframes]
    order = sorted(range(len(gts)), key=lambda i: -gts[i].n_edges)
    picks = [order[0]] + [order[round(j * (len(order) - 1) / k)] for j in range(1, k + 1)] if k else [order[0]]
    names = get_metric_names()
    with threadpool_limits(1):
        for i in dict.fromkeys(picks):
            start = time.process_time()
            model_cases(i, gts, names, 0)
            print(f"  {ids[i]}: {gts[i].n_edges} edges, {time.process_time() - start:.2f} s CPU")


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
    time_report(dest, count, args.workers)
    if args.profile is not None:
        profile_models(dest, args.profile)


if __name__ == "__main__":
    main()
