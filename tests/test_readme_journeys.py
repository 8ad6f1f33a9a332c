"""The README's journeys, run from the README's own text, in the order written, in a folder that is a fresh start.

Commands are read from the fenced blocks of the journey's section; each runs as written, with only what keeps it
small appended (``SMALLER``: options the README's commands already use) and the rater app's port made free.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from conftest import REAL_CAD, REPO

FENCED = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)
# appended to a journey's command to keep it a few seconds: later options win, so the README's own stay visible
SMALLER = {
    "pool": ["--set", "pool.models=4", "--workers", "1", "--no-progress"],
    "metric-report": ["--models", "0", "--workers", "1"],
    "learn-metric": ["--folds", "2"],
    # 64 CSG models, 12 questions per task (10 / 1 / 1): enough for the audit's probes and every split training reads
    "run": ["--set", "models.csg.count=64", "--set", "questions.allow_fewer=true", "--set",
            "questions.counts={three_view_to_isometric=12, isometric_to_pose=12, pose_to_isometric=12, "
            "isometric_view_generation=12, point_cloud_generation=12}", "--workers", "1", "--no-progress"],
    # the paper-scale recipe, read and run whole but tiny: nothing later in the journeys reads its output
    "run paper": ["--set", "models.csg.count=12", "--set", "questions.allow_fewer=true", "--set",
                  "questions.counts={three_view_to_isometric=2, isometric_to_pose=2, pose_to_isometric=2, "
                  "isometric_view_generation=2, point_cloud_generation=2}", "--workers", "1", "--no-progress"],
    # the reader's own folder (OWN_CAD_FILES): one question a task, a 2-model pool
    "run abc": ["--set", "questions.counts={three_view_to_isometric=1, isometric_to_pose=1, pose_to_isometric=1, "
                "isometric_view_generation=1, point_cloud_generation=1}", "--set", "pool.models=2",
                "--workers", "1", "--no-progress"],
    "train-baseline": ["--epochs", "1", "--max-steps", "2", "--size", "64", "--batch-size", "2"],
    "reproduce_spare3d_figure6.py": ["--archs", "vgg16", "--no-blank", "--epochs", "1", "--max-steps", "1",
                                     "--size", "64", "--batch-size", "2"],
}
# the README's placeholder for the reader's own CAD folder, given five of the repository's real CAD files: the
# smallest, so that cutting the three-view distractors stays seconds (the whole folder takes minutes)
OWN_CAD_FOLDER = "/data/abc"
OWN_CAD_FILES = ("red_cube_blue_cylinder.step", "io1-ug-214.stp", "bug3883_xr2-ct-214_l-bracket.stp",
                 "sheet_metal_54.brep", "ANC101.stp")


def journey(heading: str, readme: str | None = None) -> list[list[str]]:
    """The ``spare-gen`` commands of the README section ``## heading``, in order, comments dropped."""
    text = readme if readme is not None else (REPO / "README.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in FENCED.findall(section):
        for line in block.replace("\\\n", " ").splitlines():
            tokens = shlex.split(line, comments=True)
            if tokens and (tokens[0] == "spare-gen" or tokens[:2] == ["python", tokens[1]] and
                           tokens[1].startswith("pipelines/")):
                commands.append(tokens)
    return commands


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")


def _serve_briefly(args: list[str], cwd: Path) -> str:
    """Start a served app (rater app, quiz) as written, on a free port; load the page it says to open; Ctrl-C it."""
    proc = subprocess.Popen([sys.executable, "-m", "spare_gen", *args, "--port", str(_free_port())], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    lines = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, f"{args[0]} ended: {proc.stderr.read()}"
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


def _run_as_written(args: list[str], cwd: Path, own_cad: Path) -> subprocess.CompletedProcess:
    """One README command in ``cwd``, with only ``SMALLER``'s options appended and ``OWN_CAD_FOLDER`` read as
    ``own_cad``; a ``python pipelines/...`` line runs the clone's script."""
    if args[0] == "python":
        script = args[1].rsplit("/", 1)[-1]
        command = [sys.executable, str(REPO / args[1]), *args[2:], *SMALLER.get(script, [])]
    else:
        name = args[1]
        key = {"configs/abc.toml": "run abc", "configs/spare3d_csg.toml": "run paper"}.get(
            args[args.index("-c") + 1] if name == "run" and "-c" in args else "", name)
        command = [sys.executable, "-m", "spare_gen", *args[1:], *SMALLER.get(key, [])]
    command = [a.replace("=" + OWN_CAD_FOLDER, f"={own_cad}") for a in command]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900, env=_env())


def test_the_regenerate_and_train_journeys_run_as_written_in_order_on_a_fresh_folder(tmp_path):
    """README sections "Regenerate a dataset" then "Train and evaluate baselines", in a folder holding only what a
    clone holds that the commands name (``configs/``)."""
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    own_cad = tmp_path / "own_cad"
    own_cad.mkdir()
    for name in OWN_CAD_FILES:
        shutil.copy(REAL_CAD / name, own_cad / name)
    regenerate, train = journey("Regenerate a dataset"), journey("Train and evaluate baselines")
    assert [c[1] for c in regenerate] == ["run", "run", "run", "run", "validate", "audit", "show", "quiz"], regenerate
    assert [c[1] for c in train] == ["train-baseline", "train-baseline", "pipelines/reproduce_spare3d_figure6.py",
                                     "evaluate", "export-spare3d", "export"], train
    for args in regenerate + train:
        if args[1] == "quiz":
            assert "spare-gen quiz: open http" in _serve_briefly(args[1:], tmp_path)
            continue
        start = time.monotonic()
        done = _run_as_written(args, tmp_path, own_cad)
        print(f"{time.monotonic() - start:6.1f} s  {shlex.join(args)}")
        assert done.returncode == 0, f"{shlex.join(args)}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    out = tmp_path / "outputs"
    for dataset in ("try", "default", "spare3d_csg", "abc"):
        assert (out / dataset / "dataset.json").is_file(), dataset
    assert (out / "default" / "reports" / "audit.json").is_file()
    assert (out / "default" / "baselines" / "isometric_to_pose" / "predictions_test.csv").is_file()
    assert (out / "default" / "figure6" / "figure6.md").is_file()
    assert (out / "spare3d_layout" / "Isometric_to_pose").is_dir()
    assert list((out / "default").rglob("*.npz")), "export wrote no .npz"
