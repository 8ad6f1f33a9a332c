"""Pool throughput: variants per second on the embedded cluster (2 workers), and where the time goes.

Usage: python benchmarks/bench_pool.py [MODELS]   (default: pool.models of configs/default.toml)
Builds the models first (not timed), then times the pool stages (wireframes, corruptions with
metrics and pictures, pairs) on 2 workers, then the same models phase by phase in this process:
extraction, corruption, metrics, drawing. Machines here are noisy; compare within a run only.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
from threadpoolctl import threadpool_limits  # a scikit-learn dependency

from spare_gen.stages.pool.driver import run_pool
from spare_gen.cad.io import read_shape
from spare_gen.config import load_config
from spare_gen.stages.models.driver import run_models
from spare_gen.runner.cluster import open_client
from spare_gen.stages.pool.driver import pool_models
from spare_gen.stages.pool.child import brep_wireframe
from spare_gen.rating.pictures import write_model_pictures
from spare_gen.stages.pool.corruptions import make_corruptions, score_corruption

from cpu_account import CpuMeter

CONFIG = "configs/default.toml"
WORKERS = 2


def phases(config, out: Path) -> tuple[dict[str, float], int]:
    """Seconds per phase over the pool's models, run in this process on one BLAS thread (as a Dask
    worker runs), and the number of variants."""
    with threadpool_limits(1):
        return _phases(config, out)


def _phases(config, out: Path) -> tuple[dict[str, float], int]:
    seconds: dict[str, float] = defaultdict(float)
    n_variants = 0
    pictures = out / "inprocess"
    for m in pool_models(out, config.pool.models):
        t0 = time.perf_counter()
        try:
            gt = brep_wireframe(read_shape(out / m["brep_path"]), config.pool.deflection).wireframe
        except ValueError:  # no feature edges: the pool skips it too
            continue
        t1 = time.perf_counter()
        variants = make_corruptions(gt, m["model_id"], config.seed)
        t2 = time.perf_counter()
        for v in variants:
            if v.ok:
                score_corruption(v.wireframe, gt, config.pool.corner_threshold, config.pool.edge_threshold)
        t3 = time.perf_counter()
        write_model_pictures(pictures, m["model_id"], gt, variants, config.pool.image_size)
        t4 = time.perf_counter()
        for name, a, b in (("extraction", t0, t1), ("corruption", t1, t2), ("metrics", t2, t3), ("drawing", t3, t4)):
            seconds[name] += b - a
        n_variants += sum(v.ok for v in variants)
    return dict(seconds), n_variants


def main() -> None:
    overrides = ["runner.progress=false", "runner.dashboard=false", f"runner.workers={WORKERS}"]
    base = load_config(CONFIG, overrides)
    n_models = int(sys.argv[1]) if len(sys.argv) > 1 else base.pool.models
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pool"
        config = load_config(CONFIG, [*overrides, f'out="{out}"', f"models.csg.count={n_models}",
                                      f"pool.models={n_models}"])  # fmt: skip
        with open_client(workers=WORKERS, dashboard=False, quiet=True) as client:
            run_models(client, config, out)
            meter = CpuMeter(client)
            t0 = time.perf_counter()
            text = meter.measure("pool", n_models, "model", lambda: run_pool(client, config, out), base.pool.models)
            wall = time.perf_counter() - t0
        rows = pq.read_table(out / "corruptions.parquet", columns=["status"]).num_rows
        seconds, n_variants = phases(config, out)
    total = sum(seconds.values())
    print(f"pool: {n_models} CSG models of {CONFIG} (deflection {config.pool.deflection}, "
          f"{config.pool.image_size} px pictures), {rows} variants")
    print(f"  {text}")
    print(f"  {WORKERS} workers, pool stages end to end: {wall:6.2f} s  {rows / wall:6.1f} variants/s")
    print(f"  CPU by process kind, projected to {base.pool.models} pool models:")
    for line in meter.lines(WORKERS):
        print(f"  {line}")
    print(f"  in-process, one core: {total:6.2f} s wall  {n_variants / total:6.1f} variants/s; share of wall time:")
    for name, s in seconds.items():
        print(f"    {name:<10} {s:7.3f} s  {100 * s / total:5.1f} %")


if __name__ == "__main__":
    main()
