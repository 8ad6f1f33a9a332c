"""Speed of every wireframe metric: pairs per second on a pool, and seconds per pair at 1,000 / 5,000 edges.

Usage: ``python benchmarks/bench_metrics.py [OUT_DIR] [--max-pairs N] [--report N] [--workers W]``.
``--report N`` also times the metric property report (``spare-gen metric-report``) on N GT wireframes
(the pool's, else synthetic ones of ~150 edges) on an embedded Dask cluster, and projects 126 wireframes
(issue 11's target: <= 60 s on 2 cores). With an output folder the pool is
its ``corruptions.parquet`` variants paired with their GT in ``wireframes.parquet``; without one, a
synthetic pool of box-and-arc wireframes and perturbed copies is used.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from spare_gen.metrics.perturbations import drop_edge_fraction, jitter, normalise, wrong_edges_sequence
from spare_gen.metrics.catalog import METRIC_FAMILIES
from spare_gen.rng import derive_rng
from spare_gen.wireframe import CORNER, CURVE, Wireframe

GRAPH_COLUMNS = ["model_id", "vertices", "edges", "vertex_kinds"]


def synthetic_wireframe(n_edges: int, rng: np.random.Generator) -> Wireframe:
    """Random axis-aligned boxes (12 edges) and circles (16 segments, CURVE points), about ``n_edges`` edges,
    chained by one edge each into a single connected wireframe (the slow case for the spectral distance)."""
    verts, edges, kinds = [], [], []
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    box_edges = [(i, j) for i in range(8) for j in range(i + 1, 8) if np.count_nonzero(corners[i] - corners[j]) == 1]
    count = 0
    while count < n_edges:
        base = len(verts)
        if base:
            edges.append((base - 1, base))
            count += 1
        centre, size = rng.random(3), 0.02 + 0.2 * rng.random(3)
        if rng.random() < 0.7:
            verts.extend(centre + (corners - 0.5) * size)
            edges.extend((base + i, base + j) for i, j in box_edges)
            kinds.extend([CORNER] * 8)
            count += 12
        else:
            t = np.linspace(0, 2 * np.pi, 16, endpoint=False)
            verts.extend(centre + size[0] * np.c_[np.cos(t), np.sin(t), np.zeros(16)])
            edges.extend((base + k, base + (k + 1) % 16) for k in range(16))
            kinds.extend([CORNER] + [CURVE] * 15)
            count += 16
    return normalise(Wireframe(np.array(verts), np.array(edges), np.array(kinds, dtype=np.uint8)))


def synthetic_prediction(gt: Wireframe, rng: np.random.Generator) -> Wireframe:
    """GT with vertex noise, 10 % of the edges dropped and 10 wrong edges added."""
    noisy = jitter(drop_edge_fraction(gt, rng, 0.1), rng, 0.01)
    return wrong_edges_sequence(noisy, rng, 10)[-1]


def _read_graphs(path: Path, extra: list[str]) -> list[dict]:
    present = set(pq.read_schema(path).names)
    cols = [c for c in GRAPH_COLUMNS + extra + ["status"] if c in present]
    return [r for r in pq.read_table(path, columns=cols).to_pylist()
            if r.get("status", "ok") == "ok" and r["vertices"] is not None]


def pool_pairs(out_dir: Path | None, max_pairs: int) -> list[tuple[Wireframe, Wireframe]]:
    if out_dir is None:
        rng = derive_rng(0, "bench_metrics", "pool")
        gts = [synthetic_wireframe(int(rng.integers(20, 300)), rng) for _ in range(max(1, max_pairs // 4))]
        return [(synthetic_prediction(g, rng), g) for g in gts for _ in range(4)][:max_pairs]
    gts = {r["model_id"]: Wireframe.from_row(r) for r in _read_graphs(out_dir / "wireframes.parquet", [])}
    variants = _read_graphs(out_dir / "corruptions.parquet", [])
    return [(Wireframe.from_row(v), gts[v["model_id"]]) for v in variants if v["model_id"] in gts][:max_pairs]


def time_family(fn, pairs) -> float:
    start = time.perf_counter()
    for pred, gt in pairs:
        fn(pred, gt)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", type=Path, default=None)
    parser.add_argument("--max-pairs", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--report", type=int, default=0, help="also time the property report on N wireframes")
    parser.add_argument("--workers", type=int, default=0, help="Dask workers for --report (0 = one per core)")
    args = parser.parse_args(argv)

    pairs = pool_pairs(args.out_dir, args.max_pairs)
    n_edges = np.mean([gt.n_edges for _, gt in pairs])
    source = args.out_dir or "synthetic pool"
    print(f"pool: {len(pairs)} pairs from {source}, mean GT edges {n_edges:.0f}")
    big = {}
    for size in args.sizes:
        rng = derive_rng(0, "bench_metrics", "size", size)
        gt = synthetic_wireframe(size, rng)
        big[size] = (synthetic_prediction(gt, rng), gt)
        print(f"size {size}: GT {gt.n_vertices} vertices / {gt.n_edges} edges")
    header = f"{'metric family':<16}{'pairs/s (pool)':>16}" + "".join(f"{f's @ {s} edges':>16}" for s in args.sizes)
    print(header)
    print("-" * len(header))
    for name, fn in METRIC_FAMILIES.items():
        seconds = time_family(fn, pairs)
        cells = [f"{len(pairs) / seconds:16.1f}"]
        cells += [f"{time_family(fn, [big[s]]):16.3f}" for s in args.sizes]
        print(f"{name:<16}" + "".join(cells))
    if args.report:
        bench_report(args.out_dir, args.report, args.workers)


def bench_report(out_dir: Path | None, n: int, workers: int) -> None:
    """Wall time of the property report on ``n`` GT wireframes, and its projection to 126."""
    from spare_gen.metrics.properties import property_cases
    from spare_gen.runner.cluster import open_client

    if out_dir is not None and (out_dir / "wireframes.parquet").exists():
        from spare_gen.jobs.metric_report import load_wireframes

        wireframes = load_wireframes(out_dir / "wireframes.parquet", n)[1]
    else:
        wireframes = [synthetic_wireframe(150, derive_rng(0, "bench_metrics", "report", i)) for i in range(n)]
    from cpu_account import CpuMeter

    with open_client(workers=workers, dashboard=False, quiet=True) as client:
        meter = CpuMeter(client)
        start = time.perf_counter()
        meter.measure("metric report", len(wireframes), "wireframe", lambda: property_cases(wireframes, client=client),
                      126)
        seconds = time.perf_counter() - start
        n_workers = len(client.scheduler_info()["workers"])
    per = seconds / len(wireframes)
    print(f"metric report: {len(wireframes)} wireframes in {seconds:.1f} s wall ({per:.2f} s each); "
          f"126 wireframes projected {126 * per:.0f} s wall (target 60 s)")
    for line in meter.lines(n_workers):
        print(line)


if __name__ == "__main__":
    main()
