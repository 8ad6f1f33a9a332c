"""`spare-gen learn-metric OUT ANSWERS`: learn which metric combination predicts the raters, cross-validated."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.jobs.learn_metric import run as learn

EPILOG = """input: OUT is a pool folder; ANSWERS is an answers CSV or a folder of them (pair_id,rater_id,choice),
e.g. spare-gen learn-metric outputs/default outputs/default/annotations"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="pool output folder (pairs.parquet, corruptions.parquet)")
    p.add_argument("answers", help="answers CSV (or folder of CSVs): pair_id,rater_id,choice")
    p.add_argument("--metrics", default="", help="comma-separated metric columns to use (default: all)")
    p.add_argument("--folds", type=int, default=5)


def run(args: argparse.Namespace) -> int:
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] or None
    learn(Path(args.out), Path(args.answers), metrics=metrics, folds=args.folds)
    return 0
