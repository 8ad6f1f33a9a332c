"""Preflight before any work, in the pass ``spare-gen config`` runs too, and partial reruns that keep a dataset
consistent (issue 50, items 2 and 3).

Every refusal is one line and exit code 2 from ``config`` and from ``run`` alike, and writes nothing into ``--out``:
inputs that do not exist, a count the inputs cannot meet (the pool's included), an output path with a C1 control
character or an undecodable byte, a ``*.parquet`` in the output folder that is no Parquet file (named, before any
work), a rerun of some stages that would change what a later stage was made from (the stages to add named).
"""

from __future__ import annotations

import json
import os
import stat
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, file_hashes

QUIET = ("--no-progress", "--set", "runner.dashboard=false", "--set", "runner.workers=1")


def cli(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """``spare-gen`` as a new user runs it, with arguments as bytes where a test needs bytes that are no UTF-8."""
    return subprocess.run([sys.executable.encode(), b"-m", b"spare_gen.cli", *(os.fsencode(a) for a in args)],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"})


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


def _refused_alike(tmp_path: Path, out: str | bytes, *args: str) -> str:
    """``config`` and ``run`` with the same arguments: both exit 2 with the same one line, and ``--out`` (and the
    folder around it) holds what it held before. Returns the line."""
    out_text = os.fsdecode(out)
    before = _tree(tmp_path)
    lines = []
    for command in ("config", "run"):
        proc = cli(command, "--out", out_text, *args, *(QUIET if command == "run" else ()), cwd=tmp_path)
        assert proc.returncode == 2, (command, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stdout == "", (command, proc.stderr)
        stderr = proc.stderr.strip().splitlines()
        assert len(stderr) == 1, (command, stderr)
        lines.append(stderr[0])
    assert lines[0] == lines[1], lines
    assert _tree(tmp_path) == before  # nothing written into --out, no folder made for it
    return lines[0]


def test_a_files_root_that_does_not_exist_is_refused_by_config_and_run_before_the_cluster_starts(tmp_path):
    line = _refused_alike(tmp_path, str(tmp_path / "out"), "--set", 'models.source="files"',
                          "--set", 'models.files.root="/nonexistent"')
    assert line == "spare-gen: error: models.files.root: folder '/nonexistent' does not exist"


def test_a_files_root_that_cannot_be_listed_is_refused():
    base = Path(tempfile.mkdtemp(prefix="spare_gen-test-"))  # pytest's own folder is private to root
    try:
        _refuse_unlistable_root(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _refuse_unlistable_root(base: Path) -> None:
    locked = base / "locked"
    locked.mkdir()
    script = ("from spare_gen.stages.models.files import list_entries\n"
              f"try:\n    list_entries({str(locked)!r}, ['.step'])\n"
              "except FileNotFoundError as exc:\n    print(exc)\n")
    locked.chmod(0o311)  # enter, not list; root lists anything, so the listing runs as the ordinary user nobody
    base.chmod(0o755)
    proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", sys.executable, "-c",
                           script], capture_output=True, text=True, timeout=120, cwd="/",
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"models.files.root: folder {str(locked)!r} cannot be listed (Permission denied)"


def test_a_pool_larger_than_the_inputs_is_refused_by_config_and_run(tmp_path):
    line = _refused_alike(tmp_path, str(tmp_path / "out"), "--set", "models.csg.count=2",
                          "--set", "pool.models=9223372036854775807", "--set", "questions.enabled=false")
    assert line == ("spare-gen: config error: pool.models = 9223372036854775807 cannot be met: the inputs give at most "
                    "2 models (models.csg.count = 2); lower it (0 = every usable model) or give more models")


def test_question_counts_the_inputs_cannot_meet_are_refused_by_config_as_by_run(tmp_path):
    line = _refused_alike(tmp_path, str(tmp_path / "out"), "--set", "models.csg.count=4")
    assert "questions.counts" in line and "cannot be met: the inputs give at most 4" in line


@pytest.mark.parametrize("name, raw, expected", [
    ("C1 control character", b"a\xc2\x85b", "contains the control character '\\x85'"),
    ("undecodable byte", b"a\xffb", "not UTF-8 text: holds an undecodable byte (byte 0xff)"),
])
def test_an_output_path_with_a_c1_control_character_or_an_undecodable_byte_is_refused(tmp_path, name, raw, expected):
    out = os.fsencode(tmp_path) + b"/x/" + raw
    line = _refused_alike(tmp_path, out)
    assert line.startswith("spare-gen: error: output folder '") and expected in line, line


def test_an_output_path_is_taken_as_given_never_requoted(tmp_path):
    for name in ("caf\u00e9", "\U0001f600", 'quote"d', "back\\slash", "tab-less 'single'"):
        out = str(tmp_path / name)
        proc = cli("config", "--out", out, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["out"] == out
    assert _tree(tmp_path) == []


def test_a_text_file_where_a_table_goes_in_the_output_folder_is_named_before_any_work(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "drawings.parquet").write_text("hi")  # where spare_gen's layout puts its drawings table
    line = _refused_alike(tmp_path, str(out), "--set", "models.csg.count=4", "--set", "questions.enabled=false")
    assert line == (f"spare-gen: error: output folder {out}: drawings.parquet is not a readable Parquet file (Parquet "
                    "file size is 2 bytes, smaller than the minimum file footer (8 bytes)); spare_gen reads every "
                    "*.parquet file in its output folder as a table: move or rename it")
    assert (out / "drawings.parquet").read_text() == "hi"


def test_a_users_parquet_named_file_or_fifo_outside_the_layout_is_never_read_or_opened(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.parquet").write_text("hi")  # not where a table goes: a user's file, never read as a table
    os.mkfifo(out / "x.parquet")  # opening it for reading would wait for a writer forever
    proc = cli("config", "--out", str(out), "--set", "models.csg.count=4", "--set", "questions.enabled=false",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (out / "notes.parquet").read_text() == "hi" and stat.S_ISFIFO(os.lstat(out / "x.parquet").st_mode)


# ------------------------------------------------------------------------------------------- partial reruns

SMALL = ("--set", "models.csg.count=12", "--set", "pool.models=2", "--set", "questions.allow_fewer=true",
         *(a for task in ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric",
                          "isometric_view_generation", "point_cloud_generation")
           for a in ("--set", f"questions.counts.{task}=1")))


def test_a_rerun_of_the_models_alone_with_fewer_models_names_the_stages_to_add_and_keeps_the_dataset_valid(tmp_path):
    out = tmp_path / "out"
    first = cli("run", "--out", str(out), *QUIET, *SMALL, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert cli("validate", str(out), cwd=tmp_path).returncode == 0
    before = file_hashes(out)

    fewer = ("--set", "models.csg.count=6")
    refused = cli("run", "--out", str(out), "--stages", "models", *QUIET, *SMALL, *fewer, cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f"spare-gen: --stages models: this run changes models, which drawings, questions, pool in {out} "
        "were made from; rerun them too: --stages models,drawings,questions,pool"]
    assert file_hashes(out) == before  # nothing written
    assert cli("validate", str(out), cwd=tmp_path).returncode == 0

    # the same settings again (a resume, a redo) change nothing the later stages were made from: not refused
    same = cli("run", "--out", str(out), "--stages", "models", *QUIET, *SMALL, cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    # drawings alone with other render settings: the questions were made from those drawings
    bigger = cli("run", "--out", str(out), "--stages", "drawings", *QUIET, *SMALL, "--set", "render.size=128",
                 cwd=tmp_path)
    assert bigger.returncode == 2 and "this run changes drawings, which questions in" in bigger.stderr
    assert bigger.stderr.strip().endswith("was made from; rerun it too: --stages drawings,questions")

    done = cli("run", "--out", str(out), "--stages", "models,drawings,questions,pool", *QUIET, *SMALL, *fewer,
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert pq.read_table(out / "models.parquet").num_rows == 6
    check = cli("validate", str(out), cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
