"""`spare-gen evaluate OUT PRED.csv --task T`: accuracy of a baseline's predictions on a task split; `spare-gen evaluate
OUT OUT/quiz`: people's answers.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.evaluate``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.stages.questions.layout import DEFAULT_SPLIT

EPILOG = DATASET_INPUT + """

PRED.csv: a header and the columns question_id,answer (more columns are ignored); answer is the chosen
index 0..3, one row per question of the split, e.g.

  question_id,answer
  three_view_to_isometric-test-00000,2
  three_view_to_isometric-test-00001,0

People's answers: a folder of `spare-gen quiz` answers files (OUT/quiz, or one protocol's folder) or one such
file; no --task: every task and protocol in them is scored (accuracy with 95 % Wilson intervals, pooled and per
person, seconds per question, beside SPARE3D's human values), e.g.

  spare-gen evaluate outputs/default outputs/default/quiz
  writes reports/humans.json, reports/human_answers.csv (every answer with answer and correct) and the
  dataset card's "Human performance" section"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run`")
    p.add_argument("predictions", help="CSV question_id,answer; or people's answers (a folder such as OUT/quiz)")
    p.add_argument("--task", default=None,
                   help="the multiple-choice task the predictions answer, e.g. isometric_to_pose (another task is "
                        "refused with the list; not for people's answers)")
    p.add_argument("--split", default=DEFAULT_SPLIT, help=f"train, val or test (default {DEFAULT_SPLIT})")
    p.add_argument("--lenient", action="store_true", help="count unknown/missing/invalid predictions as wrong (warn)")
