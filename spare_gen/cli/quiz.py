"""`spare-gen quiz OUT`: serve a dataset's multiple-choice questions to people (SPARE3D's protocols); --simulate;
--withdraw PERSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spare_gen.card.compose import remove_humans_section
from spare_gen.data.human_scores import answer_files, report_paths
from spare_gen.quiz.plan import Protocol, Settings, check_person, protocol_dir
from spare_gen.quiz.server import serve
from spare_gen.quiz.simulate import People, play, simulate
from spare_gen.quiz.withdraw import withdraw


def _scored_with(out: Path, person: str) -> Path | None:
    """The answers folder or file ``reports/humans.json`` was scored from, when that report counts ``person``."""
    path = report_paths(out)[0]
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    people = {p["person_id"] for r in report.get("results", []) for p in r.get("per_person", [])}
    return Path(report.get("answers", "")) if person in people else None


def withdraw_person(out: Path, person: str) -> int:
    """Delete a person's files, say which, and score the others again where the reports counted the person."""
    person = check_person(person)
    scored = _scored_with(out, person)
    removed = withdraw(out, person)
    if not removed and scored is None:
        print(f"spare-gen quiz: nothing of {person!r} under {out / 'quiz'}: no file removed")
        return 0
    answers = sum(r.answers or 0 for r in removed)
    print(f"spare-gen quiz: withdrew {person!r}: removed {len(removed)} file(s), {answers} answer(s):")
    for r in removed:
        print(f"  {r.line()}")
    if scored is not None and not scored.resolve().is_relative_to((out / "quiz").resolve()):
        print(f"spare-gen quiz: {report_paths(out)[0]} was scored from {scored}, outside {out / 'quiz'}, and still "
              f"counts {person!r}: remove their answers there and run `spare-gen evaluate {out} ANSWERS` again")
        return 0
    if scored is not None:
        from spare_gen.cli.evaluate import score_people  # the card and the reports, as `spare-gen evaluate` writes

        try:
            remaining = answer_files(scored)
        except FileNotFoundError:
            remaining = []
        if remaining:
            print(f"spare-gen quiz: {report_paths(out)[0].name} counted them: scoring {scored} again without them")
            return score_people(out, scored)
        for path in report_paths(out):
            if path.is_file():
                path.unlink()
                print(f"  {path} (no answers are left to score)")
        card = remove_humans_section(out)
        if card is not None:
            print(f"  the \"Human performance\" section of {card}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.withdraw:
        return withdraw_person(Path(args.out), args.withdraw)
    settings = Settings(protocol=Protocol(args.protocol), questions=args.questions,
                        training_questions=args.training_questions, training_minutes=args.training_minutes,
                        time_limit_s=args.time_limit)
    out = Path(args.out)
    if args.simulate or args.url:
        people = People(count=args.simulate, accuracy=args.accuracy, seconds=args.seconds, seed=args.seed)
        if args.url:
            counts = play(args.url, out, people)
            where = args.url.split("?")[0]
        else:
            counts = simulate(out, settings, people, args.seed, tuple(args.tasks))
            where = protocol_dir(out, settings.protocol) / "answers"
        print(f"spare-gen quiz: {len(counts)} simulated people answered {sum(counts.values())} questions "
              f"({where}); score them with `spare-gen evaluate {out} {out / 'quiz'}`")
        return 0
    return serve(out, settings=settings, seed=args.seed, tasks=tuple(args.tasks), host=args.host, port=args.port,
                 person=args.person, token=args.token, consent=Path(args.consent) if args.consent else None)
