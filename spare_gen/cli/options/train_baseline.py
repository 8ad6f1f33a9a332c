"""`spare-gen train-baseline OUT --task T`: SPARE3D's baselines (VGG-16, ResNet-50, BagNet-33) or a small CNN.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.train_baseline``.
"""

from __future__ import annotations

import argparse
from enum import Enum

from spare_gen.baseline.options import option_fields
from spare_gen.cli.common import DATASET_INPUT

EPILOG = DATASET_INPUT + """ with the task's train/val/test splits, e.g.

  spare-gen train-baseline outputs/default --task isometric_to_pose --epochs 20
  spare-gen train-baseline outputs/spare3d --task three_view_to_isometric --arch vgg16 --formulation binary --bf16"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="the generated dataset")
    p.add_argument("--task", required=True, help="a multiple-choice task")
    p.add_argument("--dest", default=None, help="output folder (default: OUT/baselines/TASK)")
    add_train_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_train_options(p: argparse.ArgumentParser) -> None:
    """One flag per field of ``TrainOptions``, with its help text and default."""
    for f, kind in option_fields():  # the train options, declared once in spare_gen.baseline.options
        flag = "--" + f.name.replace("_", "-")
        default = f.default.value if isinstance(f.default, Enum) else f.default
        help_text = f.metadata["help"] if default is None else f"{f.metadata['help']} (default: {default})"
        if kind is bool:
            p.add_argument(flag, action="store_true", help=f"{f.metadata['help']} (default: off)")
        elif issubclass(kind, Enum):
            p.add_argument(flag, choices=[m.value for m in kind], default=default, help=help_text)
        else:
            p.add_argument(flag, type=kind, default=default, help=help_text, metavar=f.name.upper())
