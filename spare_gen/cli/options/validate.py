"""`spare-gen validate OUT`: check every question-set rule and every file hash.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.validate``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT

EPILOG = DATASET_INPUT + """

exit codes: 0 every rule holds, 1 a violation (one line each), 2 bad input (e.g. a folder with no dataset.json). Example:

  spare-gen validate outputs/default"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run` (dataset.json, tables, files)")
