"""A person's quiz session: consent, the plan, what is answered, what comes next, the time limits; and the answers file.

With a consent text (``--consent``), nothing of a person is stored before they agree: no plan, no answer. Agreeing
writes ``OUT/quiz/<protocol>/consent/<key>.json`` (the text's SHA-256 and the time), and every answer row carries
both (``consent_sha256``, ``consented_at``); declining stores nothing. A consent text that changed since a person
agreed is asked again before their next answer.

An answer names the position it answers, so a stale tab or a double key press gets 409 instead of a second row;
a lock per person makes each answer one append (:mod:`spare_gen.webapp.store`: fsync'ed before it is
acknowledged, so a SIGKILL loses nothing acknowledged). The answers file ``OUT/quiz/<protocol>/answers/<key>.csv``
has the columns ``ANSWER_COLUMNS`` (:mod:`spare_gen.data.human_scores`, which scores them): ``choice`` is the
chosen index (empty when the time ran out first),
``timed_out`` 1 when the answer came after the time limit (it then counts as wrong), ``response_ms`` the time
from the drawings on screen to the answer, ``shown_at``/``answered_at`` UTC times.

The clock of a question starts when its drawings are on screen: the page reports it (``show``) once every drawing
is decoded, and the server notes its own time then, once per question (``OUT/quiz/<protocol>/shown/<key>.json``,
so a reload or a server restart keeps it). Instructions, intros, feedback and breaks are never timed. A reload
shows the time left, never a fresh limit. ``response_ms`` is the page's measure, bounded by the server's (no more
than the server's time from the showing to the answer); a timed question's answer is late when the page's time is
over the limit or the server's is over it by more than ``LIMIT_GRACE_S`` (the network's delay).

The training phase (protocol ``trained``) gives each task an equal share of ``training_minutes``: a task's training
ends when its questions are answered or when an answer comes its share after its first training question was shown
(the rest of that task's training questions are skipped).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Callable

from spare_gen.atomic import write_json
from spare_gen.data.human_scores import ANSWER_COLUMNS
from spare_gen.quiz.bank import Bank
from spare_gen.quiz.plan import (
    Phase, Settings, Step, answers_path, check_person, check_settings, consent_path, load_or_make_plan, plan_path,
    shown_path,
)
from spare_gen.webapp.store import append_row, read_rows, utc_text

MAX_RESPONSE_MS = 24 * 3600 * 1000
LIMIT_GRACE_S = 2.0  # the page reports the showing and the answer; the network may delay each a little


class Conflict(ValueError):
    """The answer does not fit the session (another position, everything answered): HTTP 409."""


class BadAnswer(ValueError):
    """A malformed answer: HTTP 400."""


class NeedsConsent(ValueError):
    """The person has not agreed to the consent text on screen yet: HTTP 403."""


def text_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_json(path: Path) -> dict | None:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stored if isinstance(stored, dict) else None


def _parse_time(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


class PersonSession:
    """A person's plan and answers; ``lock`` guards the answers file. Before the person agreed to a consent text,
    ``steps`` is None and nothing of them is on disk."""

    def __init__(self, out: Path, bank: Bank, seed: int, person: str, settings: Settings, consent_sha256: str | None):
        self.out, self.bank, self.seed, self.person = Path(out), bank, seed, person
        self.settings = check_settings(settings)
        self.consent_sha256 = consent_sha256
        self.consent = _read_json(consent_path(out, self.settings.protocol, person))
        self.steps: list[Step] | None = None
        self.answered: set[int] = set()
        self.training: dict[str, tuple[float, float]] = {}  # task -> (first training question shown, last answer)
        self.shown: dict[int, float] = {}  # position -> when the server first noted it on screen
        self.lock = threading.Lock()
        if plan_path(out, self.settings.protocol, person).is_file() or not self.needs_consent:
            self.begin()

    @property
    def needs_consent(self) -> bool:
        return self.consent_sha256 is not None and (self.consent or {}).get("consent_sha256") != self.consent_sha256

    def begin(self) -> None:
        """Read or make the plan (the caller holds the quiz's lock: a new plan's task order depends on the others)
        and read back the answers and the showing of the question on screen."""
        self.steps, self.settings = load_or_make_plan(self.out, self.bank, self.seed, self.person, self.settings)
        self.answers = answers_path(self.out, self.settings.protocol, self.person)
        self.columns = ANSWER_COLUMNS
        if self.answers.is_file():  # a file written before newer columns keeps its own header
            with open(self.answers, encoding="utf-8") as fh:
                header = tuple(fh.readline().strip().split(","))
            self.columns = header if set(header) <= set(ANSWER_COLUMNS) and header else ANSWER_COLUMNS
        for row in read_rows(self.answers):
            position = int(row["position"]) if (row.get("position") or "").isdigit() else -1
            if 0 <= position < len(self.steps):
                self.answered.add(position)
                if row["phase"] == Phase.TRAINING.value:
                    self.trained_on(row["task"], _parse_time(row["shown_at"]), _parse_time(row["answered_at"]))
        tasks = {s.task for s in self.steps if s.phase is Phase.TRAINING}
        self.training_share_s = 60 * self.settings.training_minutes / max(len(tasks), 1)
        shown = _read_json(shown_path(self.out, self.settings.protocol, self.person)) or {}
        if isinstance(shown.get("position"), int) and shown["position"] not in self.answered:
            try:
                self.shown[shown["position"]] = _parse_time(shown["shown_at"])
            except (KeyError, TypeError, ValueError):
                pass

    def trained_on(self, task: str, shown: float, answered: float) -> None:
        first, last = self.training.get(task, (shown, answered))
        self.training[task] = (min(first, shown), max(last, answered))

    def training_over(self, task: str) -> bool:
        """Whether the task's share of the training time ran out (between its first showing and an answer)."""
        first, last = self.training.get(task, (0.0, 0.0))
        return last - first >= self.training_share_s

    def next_position(self) -> int:
        if self.steps is None:
            return 0
        return next((i for i, s in enumerate(self.steps) if i not in self.answered
                     and not (s.phase is Phase.TRAINING and self.training_over(s.task.value))), len(self.steps))

    def time_limit(self, step: Step) -> float | None:
        return self.settings.time_limit_s if self.settings.trained and step.phase is Phase.TEST else None

    def time_left(self, position: int, now: float) -> float | None:
        """Seconds left on the question at ``position`` (its full limit before it is shown); None without a limit."""
        limit = self.time_limit(self.steps[position])
        if limit is None:
            return None
        return max(0.0, limit - (now - self.shown.get(position, now)))


class Quiz:
    """Everything the routes share: the bank, default settings, the consent text's SHA-256 (None: no consent asked),
    the people's sessions and the clock."""

    def __init__(self, out: Path, settings: Settings, seed: int = 0, tasks: tuple[str, ...] = (),
                 clock: Callable[[], float] = time.time, consent_sha256: str | None = None):
        self.out, self.settings, self.seed, self.clock = Path(out), check_settings(settings), int(seed), clock
        self.consent_sha256 = consent_sha256
        self.bank = Bank(self.out, tasks)
        self.sessions: dict[str, PersonSession] = {}
        self.sessions_lock = threading.Lock()

    def session(self, person: object) -> PersonSession:
        """The session of ``person`` (ValueError for a bad name, Conflict for a plan drawn from other questions)."""
        person = check_person(person)
        with self.sessions_lock:
            if person not in self.sessions:
                try:
                    self.sessions[person] = PersonSession(self.out, self.bank, self.seed, person, self.settings,
                                                          self.consent_sha256)
                except ValueError as exc:
                    raise Conflict(str(exc)) from None
            return self.sessions[person]

    def agree(self, s: PersonSession, sha256: object) -> dict:
        """The person agreed to the consent text whose SHA-256 the page showed: record it, then make their plan."""
        if self.consent_sha256 is None:
            raise Conflict("this study asks no consent (the server runs without --consent)")
        if sha256 != self.consent_sha256:
            raise Conflict("the consent text changed since the page was loaded; reload the page")
        record = {"person_id": s.person, "protocol": s.settings.protocol.value, "consent_sha256": self.consent_sha256,
                  "consented_at": utc_text(self.clock())}
        with self.sessions_lock, s.lock:
            write_json(consent_path(self.out, s.settings.protocol, s.person), record)
            s.consent = record
            if s.steps is None:
                try:
                    s.begin()
                except ValueError as exc:
                    raise Conflict(str(exc)) from None
        return self.state(s)

    def state(self, s: PersonSession) -> dict:
        """What the page shows next; the question's answer is not part of it. Nothing here starts a clock."""
        now = self.clock()
        with s.lock:
            position = s.next_position()
            steps = s.steps or []
            done = s.steps is not None and position >= len(steps)
            item = None if done or s.steps is None else self.item(s, position, now)
        phases = [st.phase for st in steps]
        return {
            "person": s.person, "protocol": s.settings.protocol.value, "position": position,
            "answered": len(s.answered), "total": len(steps),
            "training_total": phases.count(Phase.TRAINING), "test_total": phases.count(Phase.TEST),
            "done": done, "item": item, "consent_needed": s.needs_consent,
        }  # fmt: skip

    def item(self, s: PersonSession, position: int, now: float) -> dict:
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
            "choice_labels": list(q.choice_labels),
            "time_limit_s": s.time_limit(step), "shown": position in s.shown, "time_left_s": s.time_left(position, now),
        }  # fmt: skip

    def _on_screen(self, s: PersonSession, position: int) -> Step:
        """The step at ``position`` if it is the question on screen (call with ``s.lock`` held)."""
        if s.needs_consent:
            raise NeedsConsent(f"person {s.person!r} has not agreed to the consent text yet")
        expected = s.next_position()
        if expected >= len(s.steps):
            raise Conflict(f"person {s.person!r} has answered all {len(s.steps)} questions")
        if position != expected:
            raise Conflict(f"position {position} is not the question on screen ({expected}); reload the page")
        return s.steps[position]

    def show(self, s: PersonSession, position: object) -> dict:
        """The page has the question's drawings on screen: its clock starts now, unless it started before (a reload:
        the clock goes on). The time left and the time since the first showing."""
        if not isinstance(position, int) or isinstance(position, bool):
            raise BadAnswer(f"position {position!r} must be an integer")
        with s.lock:
            step = self._on_screen(s, position)
            now = self.clock()
            if position not in s.shown:
                s.shown[position] = now
                write_json(shown_path(self.out, s.settings.protocol, s.person),
                           {"position": position, "shown_at": utc_text(now)})
            return {"position": position, "time_limit_s": s.time_limit(step), "time_left_s": s.time_left(position, now),
                    "elapsed_s": now - s.shown[position]}

    def picture(self, s: PersonSession, position: int, role: str) -> tuple[bytes, str] | None:
        """A drawing of the question on screen (None: not one of its roles); Conflict for any other position."""
        with s.lock:
            q = self.bank.questions[self._on_screen(s, position).question_id]
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
            step = self._on_screen(s, position)
            q = self.bank.questions[step.question_id]
            if choice is not None and not 0 <= choice < q.n_choices:
                raise BadAnswer(f"choice {choice!r} must be within 0..{q.n_choices - 1}")
            limit = s.time_limit(step)
            if choice is None and limit is None:
                raise BadAnswer("choice null (the time ran out) is only for questions with a time limit")
            now = self.clock()
            if position not in s.shown and limit is not None:
                raise Conflict(f"position {position} was never shown: a timed question's page reports its showing "
                               "(POST /api/shown) before an answer")
            shown = s.shown.get(position, now - ms / 1000)
            ms = min(ms, 1000 * (now - shown))  # the page's time, bounded by the server's
            late = limit is not None and (ms > 1000 * limit or now - shown > limit + LIMIT_GRACE_S)
            timed_out = limit is not None and (choice is None or late)
            consent = s.consent or {}
            row = {
                "person_id": s.person, "protocol": s.settings.protocol.value, "phase": step.phase.value,
                "position": position, "task": step.task.value, "split": step.split, "question_id": step.question_id,
                "choice": "" if choice is None else choice, "timed_out": int(timed_out),
                "response_ms": int(round(ms)), "time_limit_s": "" if limit is None else limit,
                "shown_at": utc_text(shown), "answered_at": utc_text(now),
                "consent_sha256": consent.get("consent_sha256", ""), "consented_at": consent.get("consented_at", ""),
            }  # fmt: skip
            append_row(s.answers, s.columns, row)
            s.answered.add(position)
            s.shown.pop(position, None)
            if step.phase is Phase.TRAINING:
                s.trained_on(step.task.value, shown, now)
        state = self.state(s)
        if step.phase is Phase.TRAINING:
            labels = q.choice_labels
            state["feedback"] = {"position": position, "answer": q.answer, "choice": choice,
                                 "correct": choice == q.answer, "answer_label": labels[q.answer],
                                 "choice_label": None if choice is None else labels[choice]}
        state["stored"] = {"position": position, "timed_out": bool(timed_out)}
        return state
