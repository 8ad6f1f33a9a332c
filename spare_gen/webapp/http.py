"""The HTTP side the served apps share (Starlette): the per-server token, 4xx with a JSON reason, bounded JSON bodies,
position parameters, the listening check and the uvicorn loop.

As Jupyter does, a served app requires a per-server token (generated unless given with ``--token``): the
printed URL carries it (``?token=``), the page then keeps it in a cookie, and every request without it (as
query parameter, ``Authorization: token ...`` header or that cookie) gets 401, so nobody else who can reach
the port (``--host 0.0.0.0``) can answer as someone else. The cookie lasts ``COOKIE_DAYS`` (a person who closes the
browser and comes back the next day needs no new link); a browser that opens the page without the token gets a
short HTML page that says what to do, any other client the JSON reason.
"""

from __future__ import annotations

import hashlib
import html
import inspect
import json
import re
import secrets
import socket
from pathlib import Path
from typing import Callable

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

NO_STORE = {"Cache-Control": "no-store"}
# An answer is under 200 bytes; a body over this limit is refused (413) before it is read whole.
MAX_BODY_BYTES = 16 * 1024
POSITION_PATTERN = re.compile(r"[0-9]{1,9}")  # ASCII digits only ('²' is a digit to str.isdigit), no 5,000 of them
AUTH_SCHEMES = ("token", "bearer")  # Authorization: token <token> (as Jupyter) or Bearer <token>
COOKIE_DAYS = 30  # a study may run for weeks; the token cookie outlives the browser session
NO_TOKEN_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Link needed</title>
<style>body{{font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;color:#222;line-height:1.5}}</style>
</head><body><h1>This page needs its full link</h1><p>{reason}.</p><p>Open the link you were given, the one that
ends in <code>?token=...</code>: the person running the study has it (the server printed it when it started).</p>
</body></html>"""


def json_error(request: Request, exc: HTTPException) -> Response:
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=NO_STORE)


def json_reply(content: object) -> Response:
    return JSONResponse(content, headers=NO_STORE)


def new_token() -> str:
    """A fresh per-server token (URL-safe, 192 bits)."""
    return secrets.token_urlsafe(24)


def cookie_name(token: str) -> str:
    """One cookie per server token, so two servers on one host do not overwrite each other's."""
    return f"spare_gen_token_{hashlib.sha256(token.encode()).hexdigest()[:8]}"


def _header_token(request: Request) -> str:
    """The token of an ``Authorization: token <t>`` or ``Bearer <t>`` header; '' for none or another form (a bare
    ``<t>`` without a scheme is not accepted)."""
    scheme, _, given = request.headers.get("authorization", "").strip().partition(" ")
    return given.strip() if scheme.lower() in AUTH_SCHEMES else ""


def _given_token(request: Request, token: str) -> str:
    return (request.query_params.get("token") or _header_token(request)
            or request.cookies.get(cookie_name(token), ""))


def require_token(request: Request, token: str | None) -> None:
    if token is not None and not secrets.compare_digest(_given_token(request, token).encode(), token.encode()):
        raise HTTPException(401, "this server needs its token: open the URL it printed (with ?token=...)")


async def json_body(request: Request) -> dict:
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


def position_param(request: Request, count: int) -> int:
    """The ``position`` query parameter: ASCII digits naming one of ``count`` positions (400 otherwise)."""
    position = request.query_params.get("position", "")
    if not POSITION_PATTERN.fullmatch(position) or int(position) >= count:
        raise HTTPException(400, f"position {position!r} must be an integer in [0, {count})")
    return int(position)


def check_name_or_400(check: Callable[[object], str], name: object) -> str:
    try:
        return check(name)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None


def build(routes: list[BaseRoute], index: Path, static: Path, token: str | None) -> Starlette:
    """The application: ``/`` serves ``index`` (setting the token cookie), ``/static`` the folder ``static``, then
    ``routes`` (each ``Route`` handler plain or async); with ``token``, every request but ``/static`` must carry it."""

    def page(request: Request) -> Response:
        response = FileResponse(index, headers=NO_STORE)
        if token is not None:  # the page's own requests (pictures too) carry the token from now on
            response.set_cookie(cookie_name(token), token, max_age=COOKIE_DAYS * 24 * 3600, httponly=True,
                                samesite="strict")
        return response

    async def page_or_reason(request: Request) -> Response:
        try:
            require_token(request, token)
        except HTTPException as exc:
            if "text/html" not in request.headers.get("accept", ""):
                raise
            reason = "The link you opened lacks the study's token" if not _given_token(request, token or "") \
                else "The link you opened carries a wrong or old token"
            return HTMLResponse(NO_TOKEN_PAGE.format(reason=html.escape(reason)), status_code=exc.status_code,
                                headers=NO_STORE)
        return page(request)

    def guarded(handler):
        async def route(request: Request) -> Response:
            require_token(request, token)
            if inspect.iscoroutinefunction(handler):
                return await handler(request)
            return await run_in_threadpool(handler, request)  # as Starlette runs a plain function
        return route

    wrapped = [Route("/", page_or_reason), *[Route(r.path, guarded(r.endpoint), methods=r.methods) for r in routes]]
    return Starlette(routes=[*wrapped, Mount("/static", StaticFiles(directory=static))],
                     exception_handlers={HTTPException: json_error})


def check_port(host: str, port: int) -> None:
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


def run_server(app: Starlette, host: str, port: int) -> None:
    """Serve until Ctrl-C (uvicorn, quiet: no access log)."""
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
