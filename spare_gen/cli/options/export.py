"""`spare-gen export OUT --task T`: one task split as a compressed .npz of fixed-size arrays.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.export``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.config.schema import TaskName
from spare_gen.jobs.defaults import EXPORT_SIZE as DEFAULT_SIZE
from spare_gen.stages.questions.layout import DEFAULT_SPLIT

EPILOG = DATASET_INPUT + """

writes OUT/exports/<task>_<split>_<size>.npz (or --dest): question_id, n_primitives, views (N, 3, H, W, 3)
uint8 F, R, T, and by task iso, pose, candidates (N, 4, H, W, 3), answer, target. Example:

  spare-gen export outputs/default --task pose_to_isometric --split train --size 64"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run`")
    p.add_argument("--task", required=True, help=f"the task to export: {', '.join(t.value for t in TaskName)}")
    p.add_argument("--split", default=DEFAULT_SPLIT, help=f"train, val or test (default {DEFAULT_SPLIT})")
    p.add_argument("--size", type=int, default=DEFAULT_SIZE, help=f"square image side in pixels (default {DEFAULT_SIZE})")
    p.add_argument("--dest", default=None, help="output .npz (default: <out>/exports/<task>_<split>_<size>.npz)")
