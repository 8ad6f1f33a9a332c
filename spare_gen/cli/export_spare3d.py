"""`spare-gen export-spare3d OUT DEST`: the dataset in the folder layout the published SPARE3D loaders read."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.export.spare3d import main


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out), Path(args.dest), args.tasks, args.splits, progress=not args.no_progress)
