"""`spare-gen show OUT`: a self-contained HTML page of sample questions."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.viewer.page import main


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out), task=args.task, n=args.n, split=args.split, dest=Path(args.dest) if args.dest else None)
