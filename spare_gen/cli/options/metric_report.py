"""`spare-gen metric-report OUT`: the metric property ("unit test") table of the ICCV 2025 study on a pool.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.metric_report``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import add_worker_arguments
from spare_gen.jobs.defaults import METRIC_REPORT_MODELS

EPILOG = """input: OUT is a folder with a corrupted-wireframe pool (`spare-gen run` or `spare-gen pool`):
models.parquet, wireframes.parquet, corruptions.parquet, e.g.

  spare-gen metric-report outputs/default --max-models 4"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a pool folder (models.parquet, wireframes.parquet, corruptions.parquet)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the property tests' random transforms and edge samples (default 0)")
    p.add_argument("--max-models", type=int, default=None, help="use only the pool's first N wireframes")
    p.add_argument("--models", type=int, default=METRIC_REPORT_MODELS,
                   help=f"top the pool's wireframes up to N from further models (0 = the pool's only; default "
                        f"{METRIC_REPORT_MODELS})")
    add_worker_arguments(p, "test the metrics")
    p.add_argument("--paper-compat", action="store_true", help="test by the paper's protocol: identity d(x,x)=0 "
                   "exactly, symmetry by numpy.isclose, chamfer/Hausdorff from random edge samples")
