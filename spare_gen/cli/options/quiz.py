"""`spare-gen quiz OUT`: serve a dataset's multiple-choice questions to people (SPARE3D's protocols); --simulate.

Its arguments and help, all that `--help` imports; the command runs in ``spare_gen.cli.quiz``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.data.human_protocol import Protocol
from spare_gen.quiz.settings import People, Settings

DESCRIPTION = (
    "Serve a local page where people answer a dataset's multiple-choice questions (3-View to Isometric, Isometric\n"
    "to Pose, Pose to Isometric): F, R, T and the candidates or the pose cube, from the dataset's own drawings;\n"
    "keys 1-4 or clicks. --protocol untrained: N random test questions per task, no feedback (SPARE3D: 4);\n"
    "trained: training questions with the right answer shown after each, then M timed test questions per task\n"
    "(SPARE3D: 100). Each person (URL &person=NAME) gets their own order; every answer is appended and fsync'ed\n"
    "at once, and a person who comes back continues where they stopped. Score with `spare-gen evaluate OUT OUT/quiz`."
)
DEFAULTS = Settings()  # the plan's defaults, declared once in spare_gen.quiz.settings
SIMULATED = People()
EPILOG = DATASET_INPUT + """

  spare-gen quiz outputs/default --protocol untrained --token s3cret
  # then open http://127.0.0.1:8766/?token=s3cret (each person enters a name, or add &person=NAME)
  spare-gen quiz outputs/default --protocol trained --simulate 5 --accuracy 0.9 --seconds 12   # a dry run

  spare-gen quiz outputs/default --consent consent.html     # consent recorded with the answers; decline stores nothing
  spare-gen quiz outputs/default --withdraw p017            # delete p017's plan, answers and consent record

answers: OUT/quiz/<protocol>/answers/<key>.csv (<key>: a digest of the person's id, never the id itself), one row
per answer: person_id, protocol, phase (training, test), position, task, split, question_id, choice (0..3; empty
when the time ran out), timed_out (0/1), response_ms (from the drawings on screen), time_limit_s, shown_at,
answered_at (UTC), consent_sha256, consented_at. Plans (with the person's counterbalanced task order):
OUT/quiz/<protocol>/plans/<key>.json; consent records: OUT/quiz/<protocol>/consent/<key>.json."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run`")
    p.add_argument("--protocol", default=DEFAULTS.protocol.value, choices=[x.value for x in Protocol],
                   help=f"SPARE3D's untrained or trained protocol (default {DEFAULTS.protocol.value})")
    p.add_argument("--questions", type=int, default=DEFAULTS.questions,
                   help="test questions per task (default: the paper's, 4 untrained, 100 trained)")
    p.add_argument("--training-questions", type=int, default=DEFAULTS.training_questions,
                   help=f"trained: training questions per task, at most (default {DEFAULTS.training_questions})")
    p.add_argument("--training-minutes", type=float, default=DEFAULTS.training_minutes,
                   help=f"trained: the training ends after this many minutes (default {DEFAULTS.training_minutes:g}, "
                        "the paper's 'about 30 minutes')")
    p.add_argument("--time-limit", type=float, default=DEFAULTS.time_limit_s,
                   help=f"trained: seconds per test question (default {DEFAULTS.time_limit_s:g}; the paper gives none)")
    p.add_argument("--tasks", nargs="+", default=[], help="tasks to ask (default: every multiple-choice task)")
    p.add_argument("--seed", type=int, default=0, help="seed of the people's question orders (default 0)")
    p.add_argument("--consent", default=None,
                   help="the study's consent text (.html, or plain text), shown before the first question")
    p.add_argument("--port", type=int, default=8766, help="TCP port (default 8766)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--token", default=None,
                   help="the token every request must carry, as in the printed URL (default: a new random one)")
    p.add_argument("--person", default=None, help="person name used when the URL has no &person= (default: ask)")
    p.add_argument("--withdraw", default=None, metavar="PERSON",
                   help="no server: delete every file of PERSON (plan, answers, consent) under OUT/quiz, say what was "
                        "deleted, and score the others again if reports/humans.json counted them")
    p.add_argument("--simulate", type=int, default=0, metavar="N",
                   help="no server: write the answers of N simulated people (a dry run), then stop")
    p.add_argument("--accuracy", type=float, default=SIMULATED.accuracy,
                   help=f"--simulate: chance of a right answer (default {SIMULATED.accuracy})")
    p.add_argument("--seconds", type=float, default=SIMULATED.seconds,
                   help=f"--simulate: typical seconds per question (default {SIMULATED.seconds:g})")
    p.add_argument("--url", default=None,
                   help="--simulate: send the simulated people to this running server (its printed URL) instead")
