"""`spare-gen evaluate OUT PRED.csv --task T`: accuracy of a baseline's predictions on a task split;
`spare-gen evaluate OUT OUT/quiz`: accuracy of people's answers (`spare-gen quiz`) per task and protocol."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spare_gen.atomic import write_json
from spare_gen.card.compose import write_humans_section
from spare_gen.cli.common import DATASET_INPUT, EXIT_BAD_INPUT
from spare_gen.data.evaluate import MULTIPLE_CHOICE, main
from spare_gen.data.human_scores import format_report, is_answers_file, report_paths, score_answers, write_answers_csv
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
                   help=f"the task the predictions answer: {', '.join(t.value for t in MULTIPLE_CHOICE)} "
                        "(not for people's answers)")
    p.add_argument("--split", default=DEFAULT_SPLIT, help=f"train, val or test (default {DEFAULT_SPLIT})")
    p.add_argument("--lenient", action="store_true", help="count unknown/missing/invalid predictions as wrong (warn)")


def score_people(out: Path, answers: Path) -> int:
    try:
        report, rows = score_answers(out, answers)
    except (ValueError, FileNotFoundError) as exc:
        print(f"spare-gen evaluate: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    json_path, csv_path = report_paths(out)
    write_json(json_path, report)
    write_answers_csv(csv_path, rows)
    card = write_humans_section(out, report)
    print(format_report(report))
    print(f"report: {json_path}; every answer: {csv_path}; dataset card section: {card}")
    return 0


def run(args: argparse.Namespace) -> int:
    predictions = Path(args.predictions)
    if is_answers_file(predictions):
        if args.task:
            print("spare-gen evaluate: error: --task is for a predictions CSV; people's answers name their tasks",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
        return score_people(Path(args.out), predictions)
    if not args.task:
        print(f"spare-gen evaluate: error: --task is required for a predictions CSV ({predictions})", file=sys.stderr)
        return EXIT_BAD_INPUT
    return main(Path(args.out), args.task, args.split, predictions, lenient=args.lenient)
