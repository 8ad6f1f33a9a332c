"""`spare-gen simulate-raters OUT`: an answers CSV of simulated raters whose hidden preference is a metric mix."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.jobs.simulate_raters import parse_group
from spare_gen.jobs.simulate_raters import run as simulate


def run(args: argparse.Namespace) -> int:
    groups = [parse_group(g) for g in args.group] if args.group else [parse_group(f"{args.raters}:{args.truth}")]
    simulate(Path(args.out), groups=groups, answers=args.answers, seed=args.seed, tie_margin=args.tie_margin)
    return 0
