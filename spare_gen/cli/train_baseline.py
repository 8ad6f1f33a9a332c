"""`spare-gen train-baseline OUT --task T`: SPARE3D's baselines (VGG-16, ResNet-50, BagNet-33) or a small CNN."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.baseline.options import options_from
from spare_gen.baseline.train import main


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out), args.task, options_from(vars(args)), Path(args.dest) if args.dest else None,
                progress=not args.no_progress)
