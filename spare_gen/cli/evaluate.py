"""`spare-gen evaluate OUT PRED.csv --task T`: accuracy of a baseline's predictions on a task split."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.data.evaluate import main


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out), args.task, args.split, Path(args.predictions), lenient=args.lenient)
