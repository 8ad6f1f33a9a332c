"""`spare-gen export-spare3d OUT DEST`: the dataset in the folder layout the published SPARE3D loaders read.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.export_spare3d``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT

EPILOG = DATASET_INPUT + """ (made with PNGs); DEST is new, empty, or an earlier export, e.g.

  spare-gen export-spare3d outputs/default /data/spare3d_like --tasks isometric_to_pose --splits train test"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="the generated dataset")
    p.add_argument("dest", help="an empty or new folder, or an earlier export to resume")
    p.add_argument("--tasks", nargs="+", default=None, help="task names (default: every task in the dataset)")
    p.add_argument("--splits", nargs="+", default=None, help="train val test (default: all three)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
