"""`spare-gen rank OUT ANSWERS`: rank pool variants from pairwise judgements."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.jobs.rank import run as rank


def run(args: argparse.Namespace) -> int:
    rank(Path(args.out), Path(args.answers), item=args.item, dest=args.dest)
    return 0
