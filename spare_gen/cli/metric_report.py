"""`spare-gen metric-report OUT`: the metric property ("unit test") table of the ICCV 2025 study on a pool."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.jobs.metric_report import run as report


def run(args: argparse.Namespace) -> int:
    report(Path(args.out), seed=args.seed, max_models=args.max_models, models=args.models, workers=args.workers,
           scheduler=args.scheduler, paper_compat=args.paper_compat)
    return 0
