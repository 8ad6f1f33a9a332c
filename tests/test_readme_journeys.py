"""The README's journeys, run from the README's own text, in the order written, in a folder that is a fresh start.

Commands are read from the fenced blocks of the journey's section; each runs as written, with only what keeps it
small appended (``SMALLER``: options the README's commands already use) and the rater app's port made free.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from conftest import REPO

FENCED = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)
# appended to a journey's command to keep it a few seconds: later options win, so the README's own stay visible
SMALLER = {
    "pool": ["--set", "pool.models=4", "--workers", "1", "--no-progress"],
    "metric-report": ["--models", "0", "--workers", "1"],
    "learn-metric": ["--folds", "2"],
}


def journey(heading: str, readme: str | None = None) -> list[list[str]]:
    """The ``spare-gen`` commands of the README section ``## heading``, in order, comments dropped."""
    text = readme if readme is not None else (REPO / "README.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in FENCED.findall(section):
        for line in block.replace("\\\n", " ").splitlines():
            tokens = shlex.split(line, comments=True)
            if tokens and tokens[0] == "spare-gen":
                commands.append(tokens)
    return commands


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")


def _serve_briefly(args: list[str], cwd: Path) -> str:
    """Start the rater app as written (on a free port), load the page it says to open, stop it with Ctrl-C."""
    proc = subprocess.Popen([sys.executable, "-m", "spare_gen", *args, "--port", str(_free_port())], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    lines = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, f"annotate ended: {proc.stderr.read()}"
            lines.append(line)
            if " open http" in line:
                break
        url = re.search(r"open (http\S+)", lines[-1]).group(1)
        for _ in range(100):  # uvicorn starts listening just after the line
            try:
                with urllib.request.urlopen(url, timeout=10) as page:
                    assert page.status == 200 and b"<html" in page.read().lower()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"{url} never answered")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    return "".join(lines)


def test_the_rating_journey_runs_as_written_and_an_empty_annotations_folder_says_what_to_do(tmp_path):
    commands = journey("Make and rate a pool")
    names = [c[1] for c in commands]
    assert names[:5] == ["pool", "annotate", "simulate-raters", "rank", "learn-metric"], names
    for args in commands:
        name = args[1]
        if name == "annotate":
            assert "answers go to outputs/pool/annotations/<rater>.csv" in _serve_briefly(args[1:], tmp_path)
            # no rater has answered yet: ranking says what to do next, in one line
            early = subprocess.run([sys.executable, "-m", "spare_gen", "rank", "outputs/pool",
                                    "outputs/pool/annotations"], cwd=tmp_path, capture_output=True, text=True,
                                   timeout=300, env=_env())
            assert early.returncode == 2 and len(early.stderr.splitlines()) == 1, early.stderr
            assert "spare-gen annotate" in early.stderr and "spare-gen simulate-raters" in early.stderr
            continue
        done = subprocess.run([sys.executable, "-m", "spare_gen", *args[1:], *SMALLER.get(name, [])], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600, env=_env())
        assert done.returncode == 0, f"{shlex.join(args)}:\n{done.stderr[-3000:]}"
    pool = tmp_path / "outputs" / "pool"
    assert (pool / "annotations" / "_simulated_raters.csv").is_file()
    assert (pool / "reports" / "ranking.md").is_file() and (pool / "reports" / "metric_properties.md").is_file()
