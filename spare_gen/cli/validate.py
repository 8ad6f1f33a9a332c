"""`spare-gen validate OUT`: check every question-set rule and every file hash."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.validate import main

EPILOG = DATASET_INPUT + """

exit codes: 0 every rule holds, 1 a violation (one line each), 2 bad input. Example:

  spare-gen validate outputs/default"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run` (dataset.json, tables, files)")


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out))
