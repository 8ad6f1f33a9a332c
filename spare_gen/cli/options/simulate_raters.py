"""`spare-gen simulate-raters OUT`: an answers CSV of simulated raters whose hidden preference is a metric mix.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.simulate_raters``.
"""

from __future__ import annotations

import argparse

from spare_gen.jobs.defaults import SIMULATED_RATERS, SIMULATED_TRUTH

EPILOG = """input: OUT is a pool folder (pairs.parquet, corruptions.parquet with the metric columns), e.g.

  spare-gen simulate-raters outputs/default --group '0.9,0.9,0.8:edge_f1' --group '0.9,0.9:corner_f1'
  writes an answers CSV in the format `spare-gen rank` reads"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="pool output folder (pairs.parquet, corruptions.parquet)")
    p.add_argument("--raters", default=SIMULATED_RATERS,
                   help=f"accuracies of one group, comma-separated (default {SIMULATED_RATERS})")
    p.add_argument("--truth", default=SIMULATED_TRUTH,
                   help=f"hidden preference: metric mix, e.g. 'edge_f1=0.7,corner_f1=0.3' (default {SIMULATED_TRUTH})")
    p.add_argument("--group", action="append", default=None,
                   help="ACCURACIES:TRUTH, repeatable (replaces --raters/--truth), e.g. '0.9,0.9:corner_f1'")
    p.add_argument("--answers", default=None, help="CSV to write (default <out>/annotations/_simulated_raters.csv, where rank and learn-metric read)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the simulated raters' choices, drawn per rater (default 0)")
    p.add_argument("--tie-margin", type=float, default=0.0, help="hidden qualities this close are 'equal'")
