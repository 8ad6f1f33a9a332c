"""`spare-gen export OUT --task T`: one task split as a compressed .npz of fixed-size arrays."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.jobs.export_npz import export


def run(args: argparse.Namespace) -> int:
    path = export(Path(args.out), args.task, args.split, args.size, Path(args.dest) if args.dest else None)
    print(f"exported {args.task}/{args.split} at {args.size} px to {path}")
    return 0
