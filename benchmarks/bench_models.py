"""Model stage throughput: models per second on the embedded cluster (1 and 2 workers), and CSG rejections.

Usage: python benchmarks/bench_models.py [COUNT]   (default 240, the default config's model count)
Prints ratios measured in this one run; machines here are noisy, so compare within a run only.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from pipelines.regenerate import run
from spare_gen.config import load_config


def one_run(count: int, workers: int, out: Path) -> tuple[float, list[dict]]:
    cfg = load_config("configs/default.toml", [f'out="{out}"', f"models.csg.count={count}", f"runner.workers={workers}",
                                               "runner.progress=false", "runner.dashboard=false"])
    t0 = time.perf_counter()
    run(cfg, stages=("models",))
    return time.perf_counter() - t0, pq.read_table(out / "models.parquet").to_pylist()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 240
    with tempfile.TemporaryDirectory() as tmp:
        t1, rows = one_run(count, 1, Path(tmp) / "w1")
        t2, _ = one_run(count, 2, Path(tmp) / "w2")
    rejected: Counter[str] = Counter()
    for r in rows:
        rejected.update(json.loads(r["rejections"] or "{}"))
    attempts = sum(r["attempts"] or 0 for r in rows)
    print(f"models: {count} CSG models (2/3/4 primitives), wall time incl. cluster start-up")
    print(f"  1 worker : {t1:6.2f} s  {count / t1:6.1f} models/s")
    print(f"  2 workers: {t2:6.2f} s  {count / t2:6.1f} models/s  (speed-up {t1 / t2:.2f}x)")
    print(f"  CSG attempts {attempts}, rejected {sum(rejected.values())} "
          f"({100 * sum(rejected.values()) / max(attempts, 1):.0f}%): {dict(sorted(rejected.items()))}")


if __name__ == "__main__":
    main()
