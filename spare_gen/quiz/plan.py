"""A person's quiz plan: which questions, in which order, under which protocol; fixed once, so a person can resume.

SPARE3D's two protocols (Xiang et al., CVPR 2020, Sec. 4 "Human Performance"):

- ``untrained``: N random test-split questions per task (the paper: 4), no feedback, no time limit.
- ``trained``: first a training phase on train-split questions, the right answer shown after each one, until
  ``training_questions`` per task are answered or the task's share of ``training_minutes`` has passed (the paper:
  about 30 minutes in all);
  then M test-split questions per task (the paper: 100) under a per-question time limit (the paper says "limited
  time" without a number).

Tasks come in blocks, one per task, in an order counterbalanced across people: the rows of a Williams design (a
Latin square over the tasks in which each task also follows every other equally often; 6 rows for SPARE3D's 3
tasks), each new person getting the row the fewest stored plans have (ties: the first). The row and its order are
recorded in the plan. Questions are drawn per task, in SPARE3D's task order, without replacement and in a random
order, from ``derive_rng(seed, "quiz", protocol, person)``: the task order moves blocks, never which questions.

The plan is written to ``OUT/quiz/<protocol>/plans/<key>.json`` on first use and read back afterwards (its settings
win over the server's). File names never carry what a person typed as their id: ``<key>`` is ``person_key(person)``,
a digest of it, so a name typed instead of a participant code is not in any file name.
"""

from __future__ import annotations

import hashlib
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
CONSENT_DIR = "consent"
SHOWN_DIR = "shown"
PERSON_DIRS = (PLANS_DIR, ANSWERS_DIR, CONSENT_DIR, SHOWN_DIR)  # every folder holding a file per person


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


def williams_rows(n: int) -> list[list[int]]:
    """A Williams design over ``n`` items: n rows (n even) or 2n (n odd, each row also reversed); every item is in
    every position equally often and follows every other item equally often."""
    if n < 1:
        return [[]]
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    return rows + [row[::-1] for row in rows] if n % 2 else rows


def task_orders(tasks: tuple[TaskName, ...]) -> list[tuple[TaskName, ...]]:
    """The counterbalanced task orders (``williams_rows`` over ``tasks``); row 0 is ``tasks``' own order."""
    return [tuple(tasks[i] for i in row) for row in williams_rows(len(tasks))]


def make_plan(bank: Bank, seed: int, person: str, settings: Settings, row: int = 0) -> list[Step]:
    """The person's steps (see the module docstring), task blocks in order ``row`` of ``task_orders``;
    deterministic in (questions, seed, person, settings, row)."""
    check_person(person)
    settings = check_settings(settings)
    rng = derive_rng(seed, "quiz", settings.protocol.value, person)
    order = task_orders(bank.tasks)[row % len(task_orders(bank.tasks))]
    drawn: dict[tuple[Phase, TaskName], list[str]] = {}
    if settings.trained:
        for task in bank.tasks:
            drawn[(Phase.TRAINING, task)] = _draw(bank, task, TRAIN_SPLIT, settings.training_questions, rng)
    for task in bank.tasks:
        drawn[(Phase.TEST, task)] = _draw(bank, task, TEST_SPLIT, settings.questions, rng)
    phases = (Phase.TRAINING, Phase.TEST) if settings.trained else (Phase.TEST,)
    return [Step(phase, task, q) for phase in phases for task in order for q in drawn[(phase, task)]]


def protocol_dir(out: Path, protocol: Protocol | str) -> Path:
    return Path(out) / QUIZ_DIR / Protocol(protocol).value


def person_key(person: str) -> str:
    """The file name stem of a person's files: ``p`` and 16 hex digits of the SHA-256 of their id, so no file name
    carries what a person typed (a name instead of a code, say)."""
    return "p" + hashlib.sha256(check_person(person).encode("utf-8")).hexdigest()[:16]


def person_file(out: Path, protocol: Protocol | str, folder: str, person: str, suffix: str) -> Path:
    return protocol_dir(out, protocol) / folder / f"{person_key(person)}{suffix}"


def plan_path(out: Path, protocol: Protocol | str, person: str) -> Path:
    return person_file(out, protocol, PLANS_DIR, person, ".json")


def answers_path(out: Path, protocol: Protocol | str, person: str) -> Path:
    return person_file(out, protocol, ANSWERS_DIR, person, ".csv")


def consent_path(out: Path, protocol: Protocol | str, person: str) -> Path:
    """The person's consent record (the consent text's SHA-256 and when they agreed), written when they agree."""
    return person_file(out, protocol, CONSENT_DIR, person, ".json")


def shown_path(out: Path, protocol: Protocol | str, person: str) -> Path:
    """When the person's question on screen was first shown (its time limit counts from then)."""
    return person_file(out, protocol, SHOWN_DIR, person, ".json")


def read_plan(path: Path) -> tuple[list[Step], Settings, str]:
    """A stored plan file: its steps, its settings and the SHA-256 of the questions it was drawn from."""
    stored = json.loads(Path(path).read_text(encoding="utf-8"))
    steps = [Step(Phase(p), TaskName(t), q) for p, t, q in stored["steps"]]
    settings = Settings(**{**stored["settings"], "protocol": Protocol(stored["settings"]["protocol"])})
    return steps, settings, stored["questions_sha256"]


def next_order_row(out: Path, protocol: Protocol | str, rows: int) -> int:
    """The task-order row for a new person: the one the fewest stored plans of this protocol have (ties: the
    first), so any number of people, withdrawals included, stays as balanced as it can."""
    used = [0] * rows
    folder = protocol_dir(out, protocol) / PLANS_DIR
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            row = json.loads(path.read_text(encoding="utf-8")).get("task_order_row")
        except (OSError, ValueError):
            continue
        if isinstance(row, int) and 0 <= row < rows:
            used[row] += 1
    return used.index(min(used))


def load_or_make_plan(out: Path, bank: Bank, seed: int, person: str, settings: Settings
                      ) -> tuple[list[Step], Settings]:
    """The stored plan of ``person`` under this protocol (its settings win), or a new one, written atomically (the
    caller serialises new plans: the task-order row depends on the plans already stored)."""
    settings = check_settings(settings)
    path, fingerprint = plan_path(out, settings.protocol, person), bank.fingerprint()
    if path.is_file():
        steps, stored, drawn_from = read_plan(path)
        if drawn_from != fingerprint:
            raise ValueError(f"{path}: plan was drawn from other questions than {Path(out)}'s; "
                             "move it away to start over")
        return steps, stored
    orders = task_orders(bank.tasks)
    row = next_order_row(out, settings.protocol, len(orders))
    steps = make_plan(bank, seed, person, settings, row)
    write_json(path, {
        "person": person, "seed": int(seed), "settings": {**asdict(settings), "protocol": settings.protocol.value},
        "questions_sha256": fingerprint,
        "task_order": [t.value for t in orders[row]], "task_order_row": row, "task_order_rows": len(orders),
        "steps": [[s.phase.value, s.task.value, s.question_id] for s in steps],
    })  # fmt: skip
    return steps, settings


def plan_counts(bank: Bank, settings: Settings) -> dict[str, int]:
    """Questions of every person's plan, by phase (the same for everyone)."""
    settings = check_settings(settings)
    training = sum(min(settings.training_questions, len(bank.ids(t, TRAIN_SPLIT))) for t in bank.tasks)
    test = sum(min(settings.questions, len(bank.ids(t, TEST_SPLIT))) for t in bank.tasks)
    return {Phase.TRAINING.value: training if settings.trained else 0, Phase.TEST.value: test}
