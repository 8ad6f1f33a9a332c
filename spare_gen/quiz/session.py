"""A person's quiz session: the plan, what is answered, what comes next, the time limits; and the answers file.

An answer names the position it answers, so a stale tab or a double key press gets 409 instead of a second row;
a lock per person makes each answer one append (:mod:`spare_gen.webapp.store`: fsync'ed before it is
acknowledged, so a SIGKILL loses nothing acknowledged). The answers file ``OUT/quiz/<protocol>/answers/<person>.csv``
has the columns ``ANSWER_COLUMNS`` (:mod:`spare_gen.data.human_scores`, which scores them): ``choice`` is the
chosen index (empty when the time ran out first),
``timed_out`` 1 when the answer came after the time limit (it then counts as wrong), ``response_ms`` the time
from the drawings on screen to the answer as the page measured it, ``shown_at``/``answered_at`` UTC times.

The training phase (protocol ``trained``) gives each task an equal share of ``training_minutes``: a task's training
ends when its questions are answered or when an answer comes its share after its first training question was shown
(the rest of that task's training questions are skipped).
The per-question limit is checked on both sides: the page counts down and sends no choice at zero; the server
counts from when it first handed out the question (``LIMIT_GRACE_S`` later for the pictures' loading).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from pathlib import Path
from typing import Callable

from spare_gen.data.human_scores import ANSWER_COLUMNS
from spare_gen.quiz.bank import Bank
from spare_gen.quiz.plan import (
    Phase, Settings, Step, answers_path, check_person, check_settings, load_or_make_plan,
)
from spare_gen.webapp.store import append_row, read_rows, utc_text

MAX_RESPONSE_MS = 24 * 3600 * 1000
LIMIT_GRACE_S = 5.0


class Conflict(ValueError):
    """The answer does not fit the session (another position, everything answered): HTTP 409."""


class BadAnswer(ValueError):
    """A malformed answer: HTTP 400."""


def _parse_time(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


class PersonSession:
    """A person's plan and answers; ``lock`` guards the answers file."""

    def __init__(self, out: Path, bank: Bank, seed: int, person: str, settings: Settings):
        self.person = person
        self.steps, self.settings = load_or_make_plan(out, bank, seed, person, settings)
        self.answers = answers_path(out, self.settings.protocol, person)
        rows = read_rows(self.answers)
        self.answered: set[int] = set()
        self.training: dict[str, tuple[float, float]] = {}  # task -> (first training question shown, last answer)
        for row in rows:
            position = int(row["position"]) if (row.get("position") or "").isdigit() else -1
            if 0 <= position < len(self.steps):
                self.answered.add(position)
                if row["phase"] == Phase.TRAINING.value:
                    self.trained_on(row["task"], _parse_time(row["shown_at"]), _parse_time(row["answered_at"]))
        tasks = {s.task for s in self.steps if s.phase is Phase.TRAINING}
        self.training_share_s = 60 * self.settings.training_minutes / max(len(tasks), 1)
        self.shown: dict[int, float] = {}  # position -> when the server first handed it out (this run)
        self.lock = threading.Lock()

    def trained_on(self, task: str, shown: float, answered: float) -> None:
        first, last = self.training.get(task, (shown, answered))
        self.training[task] = (min(first, shown), max(last, answered))

    def training_over(self, task: str) -> bool:
        """Whether the task's share of the training time ran out (between its first showing and an answer)."""
        first, last = self.training.get(task, (0.0, 0.0))
        return last - first >= self.training_share_s

    def next_position(self) -> int:
        return next((i for i, s in enumerate(self.steps) if i not in self.answered
                     and not (s.phase is Phase.TRAINING and self.training_over(s.task.value))), len(self.steps))

    def time_limit(self, step: Step) -> float | None:
        return self.settings.time_limit_s if self.settings.trained and step.phase is Phase.TEST else None


class Quiz:
    """Everything the routes share: the bank, default settings, the people's sessions and the clock."""

    def __init__(self, out: Path, settings: Settings, seed: int = 0, tasks: tuple[str, ...] = (),
                 clock: Callable[[], float] = time.time):
        self.out, self.settings, self.seed, self.clock = Path(out), check_settings(settings), int(seed), clock
        self.bank = Bank(self.out, tasks)
        self.sessions: dict[str, PersonSession] = {}
        self.sessions_lock = threading.Lock()

    def session(self, person: object) -> PersonSession:
        """The session of ``person`` (ValueError for a bad name, Conflict for a plan drawn from other questions)."""
        person = check_person(person)
        with self.sessions_lock:
            if person not in self.sessions:
                try:
                    self.sessions[person] = PersonSession(self.out, self.bank, self.seed, person, self.settings)
                except ValueError as exc:
                    raise Conflict(str(exc)) from None
            return self.sessions[person]

    def state(self, s: PersonSession, showing: bool = True) -> dict:
        """What the page shows next; the question's answer is not part of it. ``showing``: the page puts the
        question on screen now (its time starts; an answer's reply, read before an intro or the feedback, does not)."""
        with s.lock:
            position = s.next_position()
            done = position >= len(s.steps)
            item = None
            if not done:
                if showing:
                    s.shown.setdefault(position, self.clock())
                item = self.item(s, position)
        phases = [st.phase for st in s.steps]
        return {
            "person": s.person, "protocol": s.settings.protocol.value, "position": position,
            "answered": len(s.answered), "total": len(s.steps),
            "training_total": phases.count(Phase.TRAINING), "test_total": phases.count(Phase.TEST),
            "done": done, "item": item,
        }  # fmt: skip

    def item(self, s: PersonSession, position: int) -> dict:
        step = s.steps[position]
        q = self.bank.questions[step.question_id]
        block = [i for i, st in enumerate(s.steps) if (st.phase, st.task) == (step.phase, step.task)]
        base = f"/api/picture?person={s.person}&position={position}&which="
        return {
            "position": position, "phase": step.phase.value, "task": step.task.value,
            "in_block": block.index(position) + 1, "block_size": len(block), "block_start": position == block[0],
            "views": {v: base + v for v in ("f", "r", "t")},
            "extra": {k: base + k for k in q.drawings if k not in ("f", "r", "t") and not k.startswith("c")},
            "candidates": [base + f"c{k}" for k in range(q.candidates)],
            "choice_poses": list(q.choice_poses), "query_pose": q.query_pose, "n_choices": q.n_choices,
            "time_limit_s": s.time_limit(step),
        }  # fmt: skip

    def picture(self, s: PersonSession, position: int, role: str) -> tuple[bytes, str] | None:
        """A drawing of the question on screen (None: not one of its roles); Conflict for any other position."""
        with s.lock:
            if position != s.next_position():
                raise Conflict(f"position {position} is not the question on screen")
            q = self.bank.questions[s.steps[position].question_id]
        return self.bank.picture(q, role) if role in q.drawings else None

    def answer(self, s: PersonSession, body: dict) -> dict:
        """Store one answer; the next state, with the right answer as ``feedback`` after a training question."""
        position, choice, ms = body.get("position"), body.get("choice"), body.get("response_ms")
        if not isinstance(position, int) or isinstance(position, bool):
            raise BadAnswer(f"position {position!r} must be an integer")
        if choice is not None and (not isinstance(choice, int) or isinstance(choice, bool)):
            raise BadAnswer(f"choice {choice!r} must be an integer (or null when the time ran out)")
        if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not 0 <= ms <= MAX_RESPONSE_MS:
            raise BadAnswer(f"response_ms {ms!r} must be a number of milliseconds >= 0")
        with s.lock:
            expected = s.next_position()
            if expected >= len(s.steps):
                raise Conflict(f"person {s.person!r} has answered all {len(s.steps)} questions")
            if position != expected:
                raise Conflict(f"position {position} is not the question on screen ({expected}); reload the page")
            step = s.steps[position]
            q = self.bank.questions[step.question_id]
            if choice is not None and not 0 <= choice < q.n_choices:
                raise BadAnswer(f"choice {choice!r} must be within 0..{q.n_choices - 1}")
            limit = s.time_limit(step)
            if choice is None and limit is None:
                raise BadAnswer("choice null (the time ran out) is only for questions with a time limit")
            now = self.clock()
            shown = s.shown.get(position, now - ms / 1000)
            late = limit is not None and (ms > 1000 * limit or now - shown > limit + LIMIT_GRACE_S)
            timed_out = limit is not None and (choice is None or late)
            row = {
                "person_id": s.person, "protocol": s.settings.protocol.value, "phase": step.phase.value,
                "position": position, "task": step.task.value, "split": step.split, "question_id": step.question_id,
                "choice": "" if choice is None else choice, "timed_out": int(timed_out),
                "response_ms": int(round(ms)), "time_limit_s": "" if limit is None else limit,
                "shown_at": utc_text(shown), "answered_at": utc_text(now),
            }  # fmt: skip
            append_row(s.answers, ANSWER_COLUMNS, row)
            s.answered.add(position)
            if step.phase is Phase.TRAINING:
                s.trained_on(step.task.value, shown, now)
        state = self.state(s, showing=False)
        if step.phase is Phase.TRAINING:
            state["feedback"] = {"position": position, "answer": q.answer, "choice": choice,
                                 "correct": choice == q.answer}
        state["stored"] = {"position": position, "timed_out": bool(timed_out)}
        return state
