"""`spare-gen quiz OUT`: serve a dataset's multiple-choice questions to people (SPARE3D's protocols); --simulate."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.quiz.plan import Protocol, Settings, protocol_dir
from spare_gen.quiz.server import serve
from spare_gen.quiz.simulate import People, play, simulate


def run(args: argparse.Namespace) -> int:
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
