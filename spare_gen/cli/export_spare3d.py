"""`spare-gen export-spare3d OUT DEST`: the dataset in the folder layout the published SPARE3D loaders read."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.export.spare3d import main

EPILOG = DATASET_INPUT + """ (made with PNGs); DEST is new, empty, or an earlier export, e.g.

  spare-gen export-spare3d outputs/default /data/spare3d_like --tasks isometric_to_pose --splits train test"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="the generated dataset")
    p.add_argument("dest", help="an empty or new folder, or an earlier export to resume")
    p.add_argument("--tasks", nargs="+", default=None, help="task names (default: every task in the dataset)")
    p.add_argument("--splits", nargs="+", default=None, help="train val test (default: all three)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out), Path(args.dest), args.tasks, args.splits, progress=not args.no_progress)
