"""A person's quiz plan: which questions, in which order, under which protocol; fixed once, so a person can resume.

SPARE3D's two protocols (Xiang et al., CVPR 2020, Sec. 4 "Human Performance"):

- ``untrained``: N random test-split questions per task (the paper: 4), no feedback, no time limit.
- ``trained``: first a training phase on train-split questions, the right answer shown after each one, until
  ``training_questions`` per task are answered or the task's share of ``training_minutes`` has passed (the paper:
  about 30 minutes in all);
  then M test-split questions per task (the paper: 100) under a per-question time limit (the paper says "limited
  time" without a number).

Tasks come in SPARE3D's order, each a block; questions are drawn without replacement, in a random order, from
``derive_rng(seed, "quiz", protocol, person)``. The plan is written to ``OUT/quiz/<protocol>/plans/<person>.json``
on first use and read back afterwards (its settings win over the server's).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from spare_gen.atomic import write_json
from spare_gen.config.schema import TaskName
from spare_gen.data.human_scores import Phase, Protocol
from spare_gen.quiz.bank import TEST_SPLIT, TRAIN_SPLIT, Bank
from spare_gen.quiz.settings import PAPER_QUESTIONS, Settings  # noqa: F401 (also read from here)
from spare_gen.rng import derive_rng
from spare_gen.webapp.store import check_name

QUIZ_DIR = "quiz"
PLANS_DIR = "plans"
ANSWERS_DIR = "answers"


@dataclass(frozen=True)
class Step:
    """One question on a person's screen."""

    phase: Phase
    task: TaskName
    question_id: str

    @property
    def split(self) -> str:
        return TRAIN_SPLIT if self.phase is Phase.TRAINING else TEST_SPLIT


def check_person(person: object) -> str:
    return check_name(person, "person")


def check_settings(settings: Settings) -> Settings:
    try:
        Protocol(settings.protocol)
    except ValueError:
        raise ValueError(f"--protocol {settings.protocol!r} must be one of "
                         f"{', '.join(p.value for p in Protocol)}") from None
    if settings.questions < 0:
        raise ValueError(f"--questions {settings.questions} must be >= 0 (0: the paper's count)")
    if settings.training_questions < 0:
        raise ValueError(f"--training-questions {settings.training_questions} must be >= 0")
    if not settings.training_minutes > 0:
        raise ValueError(f"--training-minutes {settings.training_minutes} must be > 0")
    if not 1 <= settings.time_limit_s <= 3600:
        raise ValueError(f"--time-limit {settings.time_limit_s} must be within [1, 3600] seconds")
    return settings.resolved()


def _draw(bank: Bank, task: TaskName, split: str, n: int, rng) -> list[str]:
    ids = sorted(bank.ids(task, split))
    return [ids[i] for i in rng.permutation(len(ids))[:n]]


def make_plan(bank: Bank, seed: int, person: str, settings: Settings) -> list[Step]:
    """The person's steps (see the module docstring); deterministic in (questions, seed, person, settings)."""
    check_person(person)
    settings = check_settings(settings)
    rng = derive_rng(seed, "quiz", settings.protocol.value, person)
    steps: list[Step] = []
    if settings.trained:
        for task in bank.tasks:
            steps += [Step(Phase.TRAINING, task, q) for q in _draw(bank, task, TRAIN_SPLIT, settings.training_questions,
                                                                   rng)]
    for task in bank.tasks:
        steps += [Step(Phase.TEST, task, q) for q in _draw(bank, task, TEST_SPLIT, settings.questions, rng)]
    return steps


def protocol_dir(out: Path, protocol: Protocol | str) -> Path:
    return Path(out) / QUIZ_DIR / Protocol(protocol).value


def plan_path(out: Path, protocol: Protocol | str, person: str) -> Path:
    return protocol_dir(out, protocol) / PLANS_DIR / f"{check_person(person)}.json"


def answers_path(out: Path, protocol: Protocol | str, person: str) -> Path:
    return protocol_dir(out, protocol) / ANSWERS_DIR / f"{check_person(person)}.csv"


def read_plan(path: Path) -> tuple[list[Step], Settings, str]:
    """A stored plan file: its steps, its settings and the SHA-256 of the questions it was drawn from."""
    stored = json.loads(Path(path).read_text(encoding="utf-8"))
    steps = [Step(Phase(p), TaskName(t), q) for p, t, q in stored["steps"]]
    settings = Settings(**{**stored["settings"], "protocol": Protocol(stored["settings"]["protocol"])})
    return steps, settings, stored["questions_sha256"]


def load_or_make_plan(out: Path, bank: Bank, seed: int, person: str, settings: Settings
                      ) -> tuple[list[Step], Settings]:
    """The stored plan of ``person`` under this protocol (its settings win), or a new one, written atomically."""
    settings = check_settings(settings)
    path, fingerprint = plan_path(out, settings.protocol, person), bank.fingerprint()
    if path.is_file():
        steps, stored, drawn_from = read_plan(path)
        if drawn_from != fingerprint:
            raise ValueError(f"{path}: plan was drawn from other questions than {Path(out)}'s; "
                             "move it away to start over")
        return steps, stored
    steps = make_plan(bank, seed, person, settings)
    write_json(path, {
        "person": person, "seed": int(seed), "settings": {**asdict(settings), "protocol": settings.protocol.value},
        "questions_sha256": fingerprint,
        "steps": [[s.phase.value, s.task.value, s.question_id] for s in steps],
    })  # fmt: skip
    return steps, settings


def plan_counts(bank: Bank, settings: Settings) -> dict[str, int]:
    """Questions of every person's plan, by phase (the same for everyone)."""
    settings = check_settings(settings)
    training = sum(min(settings.training_questions, len(bank.ids(t, TRAIN_SPLIT))) for t in bank.tasks)
    test = sum(min(settings.questions, len(bank.ids(t, TEST_SPLIT))) for t in bank.tasks)
    return {Phase.TRAINING.value: training if settings.trained else 0, Phase.TEST.value: test}
