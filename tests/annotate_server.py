"""Helpers for the served apps' tests (annotate, quiz): a free loopback port, the real server as a subprocess, JSON requests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TOKEN = "test-token-0123456789"  # the servers these tests start require it (--token), as every served app does


def start_server(out: Path, port: int, *args: str, command: str = "annotate") -> subprocess.Popen:
    """`spare-gen COMMAND OUT --port PORT --token TOKEN ARGS` (annotate or quiz) as a subprocess, returned once it
    answers."""
    cmd = [sys.executable, "-m", "spare_gen.cli", command, str(out), "--port", str(port), "--token", TOKEN, *args]
    server = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, PYTHONUNBUFFERED="1"))  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stdout.read()
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config?token={TOKEN}", timeout=2).read()
            return server
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise AssertionError(f"{command} server did not come up")


def kill(server: subprocess.Popen) -> None:
    """SIGKILL: no chance to flush anything that was not already on disk."""
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=30)


def call(port: int, path: str, body: object | bytes | None = None, method: str | None = None,
         token: str | None = TOKEN) -> tuple[int, object]:
    """(status, decoded JSON or raw bytes) of a request to the server (with ``token`` in the Authorization
    header unless None); 4xx/5xx do not raise."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **({"Authorization": f"token {token}"} if token else {})}
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw, kind = response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        status, raw, kind = error.code, error.read(), error.headers.get("Content-Type", "")
    return status, json.loads(raw) if "json" in kind else raw


def listening_addresses(port: int) -> set[str]:
    """Local IPv4 addresses (dotted) with a socket listening on ``port``, from /proc/net/tcp."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found
