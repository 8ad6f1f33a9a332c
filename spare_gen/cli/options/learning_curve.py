"""`spare-gen learning-curve SOURCE --task T`: accuracy against training-set size for a network, its blank-views
twin and the audit's probe.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.learning_curve``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.cli.options.train_baseline import add_train_options

DEFAULT_SIZES = (250, 500, 1000, 2000, 4000)  # spare_gen.baseline.learning.DEFAULT_SIZES (torch-free copy: a test ties them)
DESCRIPTION = ("Accuracy against training-set size: the network (--arch), its blank-views twin and the audit's "
               "view-aware probe, each trained on the first N questions of one seeded order of the train split and "
               "scored on every val and test question, with 95 % intervals.")
EPILOG = DATASET_INPUT + """ with the task's train/val/test splits, e.g.

  spare-gen learning-curve outputs/spare3d_paper_scale_upper_poses --task isometric_to_pose --arch hypotheses
  spare-gen learning-curve ../shared/data/i2p_upper_5000 --task isometric_to_pose --arch hypotheses \\
      --sizes 250 1000 4000 --record benchmarks/learning/i2p_upper.json

Writes learning_curve.json, .md, .png, .svg and .pdf to --dest (default SOURCE/baselines/learning/TASK). A rerun
reuses every finished run whose options and questions are unchanged, so a stopped curve resumes."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="the generated dataset, or a folder of its exported caches")
    p.add_argument("--task", required=True, help="a multiple-choice task")
    p.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), metavar="N",
                   help=f"training-set sizes (default: {' '.join(map(str, DEFAULT_SIZES))})")
    p.add_argument("--dest", default=None, help="output folder (default: OUT/baselines/learning/TASK)")
    p.add_argument("--no-blank", action="store_true", help="skip the blank-views twin")
    p.add_argument("--no-probe", action="store_true", help="skip the audit's probe")
    p.add_argument("--record", default=None, metavar="FILE",
                   help="also write the results with their provenance to FILE (as benchmarks/learning/*.json)")
    add_train_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
