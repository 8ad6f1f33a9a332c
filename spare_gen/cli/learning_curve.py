"""`spare-gen learning-curve SOURCE --task T`: accuracy against training-set size (``spare_gen.baseline.learning``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.baseline.learning import main
from spare_gen.baseline.options import options_from


def run(args: argparse.Namespace) -> int:
    if any(n < 1 for n in args.sizes):
        raise ValueError(f"--sizes: every size must be at least 1, got {' '.join(map(str, args.sizes))}")
    return main(Path(args.out), args.task, options_from(vars(args)), sizes=tuple(sorted(set(args.sizes))),
                dest=Path(args.dest) if args.dest else None, blank=not args.no_blank, probe=not args.no_probe,
                record=Path(args.record) if args.record else None, progress=not args.no_progress)
