"""`spare-gen audit OUT`: question-blind bias probes per task, recorded in the dataset card."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.audit.probes import main
from spare_gen.cli.common import DATASET_INPUT

EPILOG = DATASET_INPUT + """

exit codes: 0 every probe ran and is within chance; 1 a probe is not within chance (a shortcut);
3 a probe could not run (empty split, too few questions): "not audited", never "within chance"; 2 bad input.
Writes reports/audit.json and the "Bias audit" section of OUT/README.md; prints a table and a summary line.
Example:

  spare-gen audit outputs/default"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out), seed=args.seed)
