"""Simulated people for dry runs: each answers right with a chosen probability and takes a chosen time.

A simulated person answers a question right with probability ``accuracy`` (else one of the wrong choices, uniformly)
and takes ``seconds`` per question (log-normal around it, sigma 0.5); past a time limit they give no answer, as the
page does at zero. Every draw comes from ``derive_rng(seed, "quiz-simulate", person)``.

:func:`simulate` runs them offline through the server's own :class:`~spare_gen.quiz.session.Quiz` on a simulated
clock (so the answers files are byte-identical for the same seed); :func:`play` sends them to a running server over
HTTP, many at once, as a load test of a study's machine (the answers then carry the server's clock).
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np

from spare_gen.quiz.bank import Bank, Question
from spare_gen.quiz.plan import Settings, plan_path, read_plan
from spare_gen.quiz.settings import People  # noqa: F401 (also read from here)
from spare_gen.quiz.session import Quiz
from spare_gen.rng import derive_rng
from spare_gen.webapp.store import check_name

START = 1767225600.0  # 2026-01-01T00:00:00Z: the simulated clock's start (a person i starts i hours later)
FEEDBACK_S = 2.0  # a simulated person reads the training feedback this long
SIGMA = 0.5  # spread of the log-normal answer times


def check_people(people: People) -> People:
    if people.count < 1:
        raise ValueError(f"--simulate {people.count} must be at least 1 person")
    if not 0.0 <= people.accuracy <= 1.0:
        raise ValueError(f"--accuracy {people.accuracy} must be within [0, 1]")
    if not people.seconds > 0:
        raise ValueError(f"--seconds {people.seconds} must be > 0")
    check_name(f"{people.prefix}-000", "person")
    return people


def draw_answer(rng: np.random.Generator, question: Question, people: People, limit_s: float | None
                ) -> tuple[int | None, float]:
    """(choice or None when past the limit, response ms) of one simulated answer."""
    right = rng.random() < people.accuracy
    wrong = [k for k in range(question.n_choices) if k != question.answer]
    pick = int(rng.integers(len(wrong)))
    choice = question.answer if right or not wrong else wrong[pick]
    ms = 1000.0 * people.seconds * float(np.exp(SIGMA * rng.standard_normal()))
    if limit_s is not None and ms > 1000 * limit_s:
        return None, 1000.0 * limit_s
    return choice, ms


class _Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def simulate(out: Path, settings: Settings, people: People, seed: int = 0, tasks: tuple[str, ...] = ()) -> dict:
    """Answer every simulated person's whole plan offline; {person: answers written}."""
    people, clock = check_people(people), _Clock(START)
    quiz = Quiz(Path(out), settings, seed, tasks, clock=clock)
    written = {}
    for i, name in enumerate(people.names()):
        rng = derive_rng(people.seed, "quiz-simulate", name)
        clock.now = START + 3600.0 * i
        session = quiz.session(name)
        before = len(session.answered)
        while not (state := quiz.state(session))["done"]:  # as the page: the question goes on screen, then an answer
            item = state["item"]
            quiz.show(session, item["position"])
            question = quiz.bank.questions[session.steps[item["position"]].question_id]
            choice, ms = draw_answer(rng, question, people, item["time_limit_s"])
            clock.now += ms / 1000
            reply = quiz.answer(session, {"position": item["position"], "choice": choice, "response_ms": ms})
            clock.now += FEEDBACK_S if "feedback" in reply else 0.5
        written[name] = len(session.answered) - before
    return written


def _call(base: str, token: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json",
                                                                     "Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def play(url: str, out: Path, people: People, *, deadline_s: float = 600.0, acknowledged: list | None = None) -> dict:
    """Simulated people answering a running server (``url`` with its ``?token=``), one thread each, until done or
    ``deadline_s``; a refused or cut connection (a restarting or killed server) is retried. Each answer the server acknowledged is
    appended to ``acknowledged`` as (person, position). Returns {person: answers acknowledged}."""
    people = check_people(people)
    parts = urllib.parse.urlsplit(url)
    base, token = f"{parts.scheme}://{parts.netloc}", urllib.parse.parse_qs(parts.query).get("token", [""])[0]
    acknowledged = [] if acknowledged is None else acknowledged
    bank = Bank(Path(out))
    stop_at = time.monotonic() + deadline_s
    counts: dict[str, int] = {}

    def one(name: str) -> None:
        rng = derive_rng(people.seed, "quiz-simulate", name)
        counts[name] = 0
        while time.monotonic() < stop_at:
            try:
                status, state = _call(base, token, f"/api/state?person={name}")
                if status != 200 or state["done"]:
                    return
                item = state["item"]
                steps, _, _ = read_plan(plan_path(out, state["protocol"], name))
                question = bank.questions[steps[item["position"]].question_id]
                choice, ms = draw_answer(rng, question, people, item["time_limit_s"])
                status, shown = _call(base, token, "/api/shown", {"person": name, "position": item["position"]})
                if status != 200:
                    continue  # another position is on screen now (the state was stale): ask again
                status, reply = _call(base, token, "/api/answer",
                                      {"person": name, "position": item["position"], "choice": choice,
                                       "response_ms": ms})
            except (OSError, http.client.HTTPException):  # URLError, refused, reset, timed out, cut mid-reply
                time.sleep(0.2)  # the server is down or restarting: try again
                continue
            if status == 200:
                acknowledged.append((name, item["position"]))
                counts[name] += 1

    threads = [threading.Thread(target=one, args=(name,), daemon=True) for name in people.names()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, stop_at - time.monotonic()) + 5)
    return counts


__all__ = ["People", "play", "simulate"]
