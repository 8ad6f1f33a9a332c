"""`spare-gen evaluate OUT PRED.csv --task T`: accuracy of a baseline's predictions on a task split;
`spare-gen evaluate OUT OUT/quiz`: accuracy of people's answers (`spare-gen quiz`) per task and protocol."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spare_gen.atomic import write_json
from spare_gen.card.compose import write_humans_section
from spare_gen.cli.common import EXIT_BAD_INPUT
from spare_gen.data.evaluate import main
from spare_gen.data.human_scores import format_report, is_answers_file, report_paths, score_answers, write_answers_csv


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
