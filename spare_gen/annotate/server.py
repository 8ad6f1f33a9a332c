"""The rater web app's HTTP side (Starlette): session state, answers, pictures; 4xx with a JSON reason.

One :class:`RaterSession` per rater, created on the rater's first request; a lock per rater makes
each answer a single append. An answer names the position it answers, so a stale tab or a double
key press gets 409 instead of a second row. The token, the JSON bodies and the listening check are
:mod:`spare_gen.webapp.http`'s, shared with ``spare-gen quiz``.
"""

from __future__ import annotations

import threading
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from spare_gen.annotate.items import Picture, Pool
from spare_gen.annotate.plan import (
    ANSWERS_DIR, Settings, Step, check_rater, check_settings, load_or_make_plan, plan_counts,
)
from spare_gen.annotate.store import append_answer, read_positions, stored_choice, utc_now
from spare_gen.webapp.http import (
    NO_STORE, build, check_name_or_400, check_port, json_body, json_reply, new_token, position_param, run_server,
)
from spare_gen.rating.pairs import Choice

STATIC_DIR = Path(__file__).parent / "static"
MAX_RESPONSE_MS = 24 * 3600 * 1000


class RaterSession:
    """A rater's plan and answered positions; ``lock`` guards the answers file."""

    def __init__(self, out: Path, pool: Pool, rater: str, settings: Settings):
        self.rater = rater
        self.steps, self.settings = load_or_make_plan(out, pool.pairs, pool.seed, rater, settings)
        if self.settings != settings:
            print(f"spare-gen annotate: rater {rater!r} keeps the settings of their stored plan: {self.settings}",
                  flush=True)  # fmt: skip
        self.answers = Path(out) / ANSWERS_DIR / f"{rater}.csv"
        self.answered = {p for p in read_positions(self.answers) if 0 <= p < len(self.steps)}
        self.lock = threading.Lock()

    def next_position(self) -> int:
        return next((i for i in range(len(self.steps)) if i not in self.answered), len(self.steps))


class App:
    """Everything the routes share: the pool, default settings, the raters' sessions."""

    def __init__(self, out: Path, settings: Settings, default_rater: str | None = None):
        self.out, self.settings, self.default_rater = Path(out), check_settings(settings), default_rater
        if default_rater is not None:
            check_rater(default_rater)
        self.pool = Pool(self.out)
        self.sessions: dict[str, RaterSession] = {}
        self.sessions_lock = threading.Lock()

    def session(self, rater: object) -> RaterSession:
        rater = check_name_or_400(check_rater, rater)
        with self.sessions_lock:
            if rater not in self.sessions:
                try:
                    self.sessions[rater] = RaterSession(self.out, self.pool, rater, self.settings)
                except ValueError as exc:
                    raise HTTPException(409, str(exc)) from None
            return self.sessions[rater]

    def state(self, s: RaterSession) -> dict:
        position = s.next_position()
        done = position >= len(s.steps)
        item = None
        if not done:
            step = s.steps[position]
            pictures = {
                which.value: (f"/api/picture?rater={s.rater}&position={position}&which={which.value}"
                              if self.pool.picture(step, which) is not None else None)
                for which in Picture
            }  # fmt: skip
            item = {"position": position, **self.pool.payload(step), "pictures": pictures}
        return {
            "rater": s.rater, "position": position, "answered": len(s.answered), "total": len(s.steps),
            "break_every": s.settings.break_every, "done": done, "item": item,
        }  # fmt: skip

    def answer(self, s: RaterSession, body: dict) -> dict:
        position, shown, ms = body.get("position"), body.get("choice"), body.get("response_ms")
        if not isinstance(position, int) or isinstance(position, bool):
            raise HTTPException(400, f"position {position!r} must be an integer")
        if not isinstance(shown, str) or shown not in {c.value for c in Choice}:
            raise HTTPException(400, f"choice {shown!r} must be one of left, right, equal")
        if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not 0 <= ms <= MAX_RESPONSE_MS:
            raise HTTPException(400, f"response_ms {ms!r} must be a number of milliseconds >= 0")
        with s.lock:
            expected = s.next_position()
            if expected >= len(s.steps):
                raise HTTPException(409, f"rater {s.rater!r} has answered all {len(s.steps)} pairs")
            if position != expected:
                raise HTTPException(409, f"position {position} is not the pair on screen ({expected}); reload the page")
            step: Step = s.steps[position]
            row = {
                "pair_id": step.pair_id, "rater_id": s.rater,
                "choice": stored_choice(Choice(shown), step.shown_swapped).value,
                "is_repeat": int(step.is_repeat), "shown_swapped": int(step.shown_swapped),
                "answered_at": utc_now(), "response_ms": int(round(ms)), "position": position,
            }  # fmt: skip
            append_answer(s.answers, row)
            s.answered.add(position)
        return self.state(s)


def build_app(app: App, token: str | None = None) -> Starlette:
    """The Starlette application serving ``app``; with ``token``, every request must carry it (see
    :mod:`spare_gen.webapp.http`)."""

    def config(request: Request) -> Response:
        return json_reply({"default_rater": app.default_rater})

    def state(request: Request) -> Response:
        return json_reply(app.state(app.session(request.query_params.get("rater"))))

    async def answer(request: Request) -> Response:
        body = await json_body(request)
        session = app.session(body.get("rater"))
        return json_reply(await run_in_threadpool(app.answer, session, body))

    def picture(request: Request) -> Response:
        session = app.session(request.query_params.get("rater"))
        position, which = position_param(request, len(session.steps)), request.query_params.get("which")
        if which not in {p.value for p in Picture}:
            raise HTTPException(400, f"which {which!r} must be one of {', '.join(p.value for p in Picture)}")
        path = app.pool.picture(session.steps[position], Picture(which))
        if path is None:
            raise HTTPException(404, f"no {which} picture for this pair")
        return FileResponse(path, media_type="image/png", headers=NO_STORE)

    routes = [Route("/api/config", config), Route("/api/state", state),
              Route("/api/answer", answer, methods=["POST"]), Route("/api/picture", picture)]
    return build(routes, STATIC_DIR / "index.html", STATIC_DIR, token)


def serve(out: Path, *, host: str = "127.0.0.1", port: int = 8765, rater: str | None = None,
          settings: Settings = Settings(), token: str | None = None) -> int:
    """Load the pool, print the address (with the server's token: ``token`` or a new one), serve until Ctrl-C."""
    out = Path(out)
    app = App(out, settings, rater)
    check_port(host, port)
    token = token or new_token()
    shown, repeats = plan_counts(app.pool.pairs, app.settings)
    url = f"http://{host}:{port}/?token={token}" + (f"&rater={rater}" if rater else "")
    print(f"spare-gen annotate: each rater answers {shown + repeats} pairs ({shown} of the pool's "
          f"{len(app.pool.pairs)} in {out}, {repeats} of them twice); answers go to "
          f"{out / ANSWERS_DIR}/<rater>.csv", flush=True)
    print(f"spare-gen annotate: open {url} (one URL per rater: &rater=NAME); Ctrl-C stops", flush=True)
    run_server(build_app(app, token), host, port)
    return 0

