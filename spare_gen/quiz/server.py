"""The quiz's HTTP side (Starlette): the page's config, a person's state, consent, the showing of a question, answers
and drawings; 4xx with a JSON reason.

The token, JSON bodies, the listening check and the answers file's appends are :mod:`spare_gen.webapp`'s, shared
with ``spare-gen annotate``. Drawings are served by position and role only
(``/api/picture?person=P&position=N&which=c2``), and only for the question on screen: no file name reaches the page, and no request names a path.
"""

from __future__ import annotations

import html
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from spare_gen.canvas.pose_cube import pose_cube_svg
from spare_gen.quiz.bank import TEST_SPLIT, TRAIN_SPLIT, Bank
from spare_gen.quiz.plan import PAPER_QUESTIONS, Phase, Protocol, Settings, check_person, plan_counts, protocol_dir
from spare_gen.quiz.session import BadAnswer, Conflict, NeedsConsent, PersonSession, Quiz, text_sha256
from spare_gen.stages.questions.tasks import TASK_SPECS
from spare_gen.webapp.http import (
    NO_STORE, build, check_name_or_400, check_port, json_body, json_reply, new_token, position_param, run_server,
)

STATIC_DIR = Path(__file__).parent / "static"
ROLE_LENGTH = 8  # roles are f, r, t, iso, c0..c9: a longer ``which`` is refused before any lookup
GENERAL = (
    "SPARE3D measured people on three tasks. Each question shows line drawings of a 3D object: its front (F), "
    "right (R) and top (T) views, as engineering drawings place them, and sometimes an isometric drawing. "
    "The pose cube shows the eight isometric viewing poses: imagine the object at the centre of a cube; each "
    "corner, numbered 1 to 8, is a viewpoint, and F, R and T are seen through the centres of the cube's faces."
)


def _count(n: float, word: str) -> str:
    return f"{n:g} {word}{'' if n == 1 else 's'}"


def protocol_text(settings: Settings, bank: Bank) -> str:
    """What the instructions say of the protocol, with the counts a person will really get."""
    test = max(min(settings.questions, len(bank.ids(t, TEST_SPLIT))) for t in bank.tasks)
    if settings.trained:
        training = max(min(settings.training_questions, len(bank.ids(t, TRAIN_SPLIT))) for t in bank.tasks)
        return (f"First, training questions from the training set: after each answer the right answer is shown. "
                f"Training ends after {_count(training, 'question')} per task or "
                f"{_count(settings.training_minutes, 'minute')} in all. Then test questions, {test} per task, "
                f"{settings.time_limit_s:g} seconds each: an answer after the time counts as wrong, and no answer "
                f"is shown.")
    return f"{_count(test, 'question')} per task; the right answer is not shown. Take the time you need."


@dataclass(frozen=True)
class Consent:
    """The study's consent text as the page shows it (HTML) and the SHA-256 of its file's bytes, which every answer
    records (``sha256sum FILE`` prints the same)."""

    html: str
    sha256: str


@contextmanager
def http_errors():
    """The session's refusals as HTTP: 400 bad input, 403 no consent yet, 409 not the question on screen."""
    try:
        yield
    except BadAnswer as exc:
        raise HTTPException(400, str(exc)) from None
    except NeedsConsent as exc:
        raise HTTPException(403, str(exc)) from None
    except Conflict as exc:
        raise HTTPException(409, str(exc)) from None


class QuizApp:
    """The Quiz with HTTP errors: 400 for bad input, 403 before consent, 409 for answers that do not fit the session."""

    def __init__(self, quiz: Quiz, consent: Consent | None = None, default_person: str | None = None):
        self.quiz, self.consent, self.default_person = quiz, consent, default_person
        if default_person is not None:
            check_person(default_person)

    def session(self, person: object) -> PersonSession:
        person = check_name_or_400(check_person, person)
        try:
            return self.quiz.session(person)
        except Conflict as exc:
            raise HTTPException(409, str(exc)) from None

    def config(self) -> dict:
        settings = self.quiz.settings
        tasks = {t.value: {"title": TASK_SPECS[t].spare3d.title,
                           "instructions": " ".join(filter(None, [TASK_SPECS[t].instructions,
                                                                  self.quiz.bank.hidden_note]))}
                 for t in self.quiz.bank.tasks}
        return {
            "default_person": self.default_person, "protocol": settings.protocol.value,
            "general": GENERAL, "protocol_text": protocol_text(settings, self.quiz.bank), "tasks": tasks,
            "consent": self.consent.html if self.consent else None,
            "consent_sha256": self.consent.sha256 if self.consent else None, "pose_cube": pose_cube_svg((), ""),
        }  # fmt: skip

    def state(self, s: PersonSession) -> dict:
        return with_cube(self.quiz.state(s))

    def answer(self, s: PersonSession, body: dict) -> dict:
        with http_errors():
            return with_cube(self.quiz.answer(s, body))

    def show(self, s: PersonSession, body: dict) -> dict:
        with http_errors():
            return self.quiz.show(s, body.get("position"))

    def agree(self, s: PersonSession, body: dict) -> dict:
        with http_errors():
            return with_cube(self.quiz.agree(s, body.get("consent_sha256")))


def with_cube(state: dict) -> dict:
    """The state with its question's pose cube (the query pose or the choice poses filled), drawn by the server."""
    item = state["item"]
    if item is not None:
        query = item["query_pose"]
        poses = tuple(item["choice_poses"]) or ((query,) if query else ())
        item["pose_cube"] = pose_cube_svg(poses, f"pose {query}" if query else "") if poses else None
    return state


def build_app(app: QuizApp, token: str | None = None) -> Starlette:
    """The Starlette application serving ``app``; with ``token``, every request must carry it."""

    def config(request: Request) -> Response:
        return json_reply(app.config())

    def state(request: Request) -> Response:
        return json_reply(app.state(app.session(request.query_params.get("person"))))

    def posting(method):
        async def route(request: Request) -> Response:
            body = await json_body(request)
            session = app.session(body.get("person"))
            return json_reply(await run_in_threadpool(method, session, body))
        return route

    def picture(request: Request) -> Response:
        session = app.session(request.query_params.get("person"))
        position, which = position_param(request, len(session.steps)), request.query_params.get("which", "")
        if len(which) > ROLE_LENGTH or not which.isascii() or not which.isalnum():
            raise HTTPException(400, f"which {which[:20]!r} must name a drawing of the question (f, r, t, iso, c0...)")
        with http_errors():
            found = app.quiz.picture(session, position, which)
        if found is None:
            raise HTTPException(404, f"the question on screen has no drawing {which!r}")
        data, media_type = found
        return Response(data, media_type=media_type, headers=NO_STORE)

    routes = [Route("/api/config", config), Route("/api/state", state),
              Route("/api/answer", posting(app.answer), methods=["POST"]),
              Route("/api/shown", posting(app.show), methods=["POST"]),
              Route("/api/consent", posting(app.agree), methods=["POST"]), Route("/api/picture", picture)]
    return build(routes, STATIC_DIR / "index.html", STATIC_DIR, token)


def read_consent(path: Path | None) -> Consent | None:
    """The study's consent text (HTML as written, or plain text escaped, paragraphs kept) and its hash, or None."""
    if path is None:
        return None
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--consent {path}: no such file")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"--consent {path}: not UTF-8 text") from None
    if path.suffix.lower() not in (".html", ".htm"):
        text = "".join(f"<p>{html.escape(p.strip())}</p>" for p in text.split("\n\n") if p.strip())
    return Consent(text, text_sha256(data))


def serve(out: Path, *, settings: Settings = Settings(), seed: int = 0, tasks: tuple[str, ...] = (),
          host: str = "127.0.0.1", port: int = 8766, person: str | None = None, token: str | None = None,
          consent: Path | None = None) -> int:
    """Load the questions, print the address (with the server's token), serve until Ctrl-C."""
    out = Path(out)
    consent_text = read_consent(consent)
    app = QuizApp(Quiz(out, settings, seed, tasks, consent_sha256=consent_text.sha256 if consent_text else None),
                  consent_text, person)
    check_port(host, port)
    token = token or new_token()
    s = app.quiz.settings
    counts = plan_counts(app.quiz.bank, s)
    short = [t.value for t in app.quiz.bank.tasks
             if len(app.quiz.bank.ids(t, "test")) < s.questions]
    note = f" (fewer for {', '.join(short)}: its test split is smaller)" if short else ""
    training = f"{counts[Phase.TRAINING.value]} training questions, then " if s.trained else ""
    paper = PAPER_QUESTIONS[Protocol(s.protocol)]
    print(f"spare-gen quiz: protocol {s.protocol.value}: each person answers {training}"
          f"{counts[Phase.TEST.value]} test questions, {s.questions} per task{note} (SPARE3D: {paper}) of "
          f"{', '.join(t.value for t in app.quiz.bank.tasks)} in {out}; answers go to "
          f"{protocol_dir(out, s.protocol) / 'answers'}/ (one file per person, named by a digest of their id)"
          + (f"; consent {consent} (SHA-256 {consent_text.sha256[:12]}...) is recorded with them" if consent_text
             else ""), flush=True)
    url = f"http://{host}:{port}/?token={token}" + (f"&person={person}" if person else "")
    print(f"spare-gen quiz: open {url} (one URL per person: &person=NAME); Ctrl-C stops", flush=True)
    run_server(build_app(app, token), host, port)
    return 0
