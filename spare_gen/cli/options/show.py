"""`spare-gen show OUT`: a self-contained HTML page of sample questions.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.show``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.stages.questions.layout import DEFAULT_SPLIT

EPILOG = DATASET_INPUT + """

writes OUT/show/index.html (or --dest): a self-contained page (drawings embedded) of N questions per task
with their drawings, a picture of the pose cube for the pose tasks, and each answer behind a toggle. Example:

  spare-gen show outputs/default --task pose_to_isometric --n 6"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run`")
    p.add_argument("--task", default=None, help="one task (default: every task present)")
    p.add_argument("--n", type=int, default=8, help="questions per task (default 8)")
    p.add_argument("--split", default=DEFAULT_SPLIT, help=f"train, val or test (default {DEFAULT_SPLIT})")
    p.add_argument("--dest", default=None, help="output HTML (default: <out>/show/index.html)")
