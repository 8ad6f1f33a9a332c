"""The rater web app's HTTP side (Starlette): session state, answers, pictures; 4xx with a JSON reason.

One :class:`RaterSession` per rater, created on the rater's first request; a lock per rater makes
each answer a single append. An answer names the position it answers, so a stale tab or a double
key press gets 409 instead of a second row.

As Jupyter does, a served app requires a per-server token (generated unless given with ``--token``): the
printed URL carries it (``?token=``), the page then keeps it in a cookie, and every request without it (as
query parameter, ``Authorization: token ...`` header or that cookie) gets 401, so nobody else who can reach
the port (``--host 0.0.0.0``) can answer as a rater.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import secrets
import socket
import threading
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from spare_gen.annotate.items import Picture, Pool
from spare_gen.annotate.plan import (
    ANNOTATIONS_DIR, Settings, Step, check_rater, check_settings, load_or_make_plan, plan_counts,
)
from spare_gen.annotate.store import append_answer, read_positions, stored_choice, utc_now
from spare_gen.wireframes.pairs import Choice

STATIC_DIR = Path(__file__).parent / "static"
MAX_RESPONSE_MS = 24 * 3600 * 1000
NO_STORE = {"Cache-Control": "no-store"}
# An answer is under 200 bytes; a body over this limit is refused (413) before it is read whole.
MAX_BODY_BYTES = 16 * 1024
POSITION_PATTERN = re.compile(r"[0-9]{1,9}")  # ASCII digits only ('²' is a digit to str.isdigit), no 5,000 of them
AUTH_SCHEMES = ("token", "bearer")  # Authorization: token <token> (as Jupyter) or Bearer <token>


class RaterSession:
    """A rater's plan and answered positions; ``lock`` guards the answers file."""

    def __init__(self, out: Path, pool: Pool, rater: str, settings: Settings):
        self.rater = rater
        self.steps, self.settings = load_or_make_plan(out, pool.pairs, pool.seed, rater, settings)
        if self.settings != settings:
            print(f"spare-gen annotate: rater {rater!r} keeps the settings of their stored plan: {self.settings}",
                  flush=True)  # fmt: skip
        self.answers = Path(out) / ANNOTATIONS_DIR / f"{rater}.csv"
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
        try:
            rater = check_rater(rater)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
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


def _json_error(request: Request, exc: HTTPException) -> Response:
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=NO_STORE)


def new_token() -> str:
    """A fresh per-server token (URL-safe, 192 bits)."""
    return secrets.token_urlsafe(24)


def _cookie_name(token: str) -> str:
    """One cookie per server token, so two servers on one host do not overwrite each other's."""
    return f"spare_gen_token_{hashlib.sha256(token.encode()).hexdigest()[:8]}"


def _header_token(request: Request) -> str:
    """The token of an ``Authorization: token <t>`` or ``Bearer <t>`` header; '' for none or another form (a bare
    ``<t>`` without a scheme is not accepted)."""
    scheme, _, given = request.headers.get("authorization", "").strip().partition(" ")
    return given.strip() if scheme.lower() in AUTH_SCHEMES else ""


def _given_token(request: Request, token: str) -> str:
    return (request.query_params.get("token") or _header_token(request)
            or request.cookies.get(_cookie_name(token), ""))


async def _json_body(request: Request) -> dict:
    """The request's JSON object, read up to MAX_BODY_BYTES (413 beyond, without reading the rest); malformed,
    too deeply nested or not an object: 400."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise HTTPException(413, f"the request body is over {MAX_BODY_BYTES} bytes")
    raw = bytearray()
    async for chunk in request.stream():  # a body sent without a length (chunked) is cut off at the limit too
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise HTTPException(413, f"the request body is over {MAX_BODY_BYTES} bytes")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
        raise HTTPException(400, "the request body must be JSON") from None
    if not isinstance(body, dict):
        raise HTTPException(400, "the request body must be a JSON object")
    return body


def _require_token(request: Request, token: str | None) -> None:
    if token is not None and not secrets.compare_digest(_given_token(request, token).encode(), token.encode()):
        raise HTTPException(401, "this server needs its token: open the URL it printed (with ?token=...)")


def build_app(app: App, token: str | None = None) -> Starlette:
    """The Starlette application serving ``app``; with ``token``, every request must carry it (module docstring)."""

    def config(request: Request) -> Response:
        return JSONResponse({"default_rater": app.default_rater}, headers=NO_STORE)

    def state(request: Request) -> Response:
        return JSONResponse(app.state(app.session(request.query_params.get("rater"))), headers=NO_STORE)

    async def answer(request: Request) -> Response:
        body = await _json_body(request)
        session = app.session(body.get("rater"))
        return JSONResponse(await run_in_threadpool(app.answer, session, body), headers=NO_STORE)

    def picture(request: Request) -> Response:
        session = app.session(request.query_params.get("rater"))
        position, which = request.query_params.get("position", ""), request.query_params.get("which")
        if not POSITION_PATTERN.fullmatch(position) or int(position) >= len(session.steps):
            raise HTTPException(400, f"position {position!r} must be an integer in [0, {len(session.steps)})")
        if which not in {p.value for p in Picture}:
            raise HTTPException(400, f"which {which!r} must be one of {', '.join(p.value for p in Picture)}")
        path = app.pool.picture(session.steps[int(position)], Picture(which))
        if path is None:
            raise HTTPException(404, f"no {which} picture for this pair")
        return FileResponse(path, media_type="image/png", headers=NO_STORE)

    def index(request: Request) -> Response:
        response = FileResponse(STATIC_DIR / "index.html", headers=NO_STORE)
        if token is not None:  # the page's own requests (pictures too) carry the token from now on
            response.set_cookie(_cookie_name(token), token, httponly=True, samesite="strict")
        return response

    def guarded(handler):
        async def route(request: Request) -> Response:
            _require_token(request, token)
            if inspect.iscoroutinefunction(handler):
                return await handler(request)
            return await run_in_threadpool(handler, request)  # as Starlette runs a plain function
        return route

    routes = [
        Route("/", guarded(index)),
        Route("/api/config", guarded(config)),
        Route("/api/state", guarded(state)),
        Route("/api/answer", guarded(answer), methods=["POST"]),
        Route("/api/picture", guarded(picture)),
        Mount("/static", StaticFiles(directory=STATIC_DIR)),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: _json_error})


def _check_port(host: str, port: int) -> None:
    """One clear line instead of a server traceback when the address cannot be used."""
    if not 0 < port < 65536:
        raise ValueError(f"--port {port} must be within 1..65535")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def serve(out: Path, *, host: str = "127.0.0.1", port: int = 8765, rater: str | None = None,
          settings: Settings = Settings(), token: str | None = None) -> int:
    """Load the pool, print the address (with the server's token: ``token`` or a new one), serve until Ctrl-C."""
    import uvicorn

    out = Path(out)
    app = App(out, settings, rater)
    _check_port(host, port)
    token = token or new_token()
    shown, repeats = plan_counts(app.pool.pairs, app.settings)
    url = f"http://{host}:{port}/?token={token}" + (f"&rater={rater}" if rater else "")
    print(f"spare-gen annotate: each rater answers {shown + repeats} pairs ({shown} of the pool's "
          f"{len(app.pool.pairs)} in {out}, {repeats} of them twice); answers go to "
          f"{out / ANNOTATIONS_DIR}/<rater>.csv", flush=True)
    print(f"spare-gen annotate: open {url} (one URL per rater: &rater=NAME); Ctrl-C stops", flush=True)
    uvicorn.run(build_app(app, token), host=host, port=port, log_level="warning", access_log=False)
    return 0

