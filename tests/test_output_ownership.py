"""The output folder is spare_gen's only where it can prove it wrote a file; validate covers every file it writes.

Real runs (small CSG counts) through the command line, real files: a user's files in the output folder survive
runs and are listed; shrinking reruns list what they remove and keep what a later stage's table still names; an
output folder that cannot be meant is refused in one line; every kind of file validate used to miss (pool
pictures, preview sheets, the card, the audit report, stray files) is caught.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spare_gen.store import ownership, shards
from spare_gen.validate import validate
from tests.conftest import REPO, spare_gen_cli

QUIET = ["--no-progress", "--set", "runner.dashboard=false", "--workers", "1"]
USER_FILES = {"models/my_design.step": "m\n", "drawings/sketch.png": "k\n", "notes.txt": "mine\n"}


def _run(out: Path, count: int, stages: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = spare_gen_cli("run", "--out", str(out), "--set", f"models.csg.count={count}", "--stages", stages, *QUIET,
                         cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc


def _model_files(out: Path, model: str) -> set[str]:
    found = {p.relative_to(out).as_posix() for p in (out / "drawings" / model).glob("*")}
    return found | {p.relative_to(out).as_posix() for p in (out / "models").glob(f"{model}.*")}


def test_a_users_files_in_the_output_folder_survive_runs_and_shrinking_reruns_and_are_listed(tmp_path):
    out = tmp_path / "u"
    for rel, text in USER_FILES.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)

    first = _run(out, 2, "models,drawings", tmp_path)
    assert "removed" not in first.stderr
    assert f"3 file(s) in {out} are not spare_gen's or were changed: kept (e.g. drawings/sketch.png)" in first.stderr
    assert all((out / rel).read_text() == text for rel, text in USER_FILES.items())
    proc = spare_gen_cli("validate", str(out))
    assert proc.returncode == 1
    assert sorted(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("stray:")) == \
        sorted(USER_FILES)

    # fewer models, the models stage alone: refused before any work (csg_000001's drawings were made from the model
    # it would remove, issue 50), nothing removed
    second_model = _model_files(out, "csg_000001")
    assert len(second_model) == 2 + 22
    refused = spare_gen_cli("run", "--out", str(out), "--set", "models.csg.count=1", "--stages", "models", *QUIET,
                            cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.strip().endswith("rerun it too: --stages models,drawings")
    assert all((out / rel).is_file() for rel in second_model)

    # with the drawings stage too: now nothing names csg_000001's files, and they go, every one listed
    third = _run(out, 1, "models,drawings", tmp_path)
    assert f"removed {len(second_model)} file(s)" in third.stderr
    assert sorted(json.loads((out / "run.json").read_text())["removed"]) == sorted(second_model)
    assert not (out / "drawings" / "csg_000001").exists()
    assert all((out / rel).read_text() == text for rel, text in USER_FILES.items())
    assert f"3 file(s) in {out} are not spare_gen's or were changed: kept" in third.stderr
    assert sorted(p for p in validate(out)) == sorted(
        f"stray: {rel} is not spare_gen's: no table names it and dataset.json does not record it (kept; remove it "
        "or move it out of the dataset)" for rel in USER_FILES)
    assert set(ownership.read(out)) & set(USER_FILES) == set()


def test_an_output_folder_that_is_empty_the_root_or_has_a_control_character_is_one_line_and_exit_2(tmp_path):
    cases = {
        "empty": (["--set", 'out=""'], "output folder '': empty"),
        "empty --out": (["--out", ""], "output folder '': empty"),
        "blank": (["--out", " "], "output folder ' ': empty"),
        "root": (["--out", "/"], "output folder '/': is the file system's root"),
        "root above": (["--out", "/tmp/../.."], "is the file system's root"),
        "newline": (["--out", "out\nrm"], "contains the control character '\\n'"),
        "escape": (["--out", "out\x1b[2J"], "contains the control character '\\x1b'"),
    }
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    for name, (args, expected) in cases.items():
        proc = subprocess.run([sys.executable, "-m", "spare_gen.cli", "run", "--no-progress", *args], cwd=cwd,
                              capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO)})
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, (name, proc.stderr)
        assert len(lines) == 1 and expected in lines[0] and "Traceback" not in proc.stderr, (name, proc.stderr)
    assert list(cwd.iterdir()) == []  # nothing written, not even into the current folder


# 15 questions in all: what 16 models can give when each serves one question (questions.model_reuse = "once")
SMALL_COUNTS = ("questions.counts={three_view_to_isometric=3, isometric_to_pose=3, pose_to_isometric=3, "
                "isometric_view_generation=3, point_cloud_generation=3}")


@pytest.fixture(scope="module")
def pooled(tmp_path_factory) -> Path:
    """Every stage on 16 CSG models: questions, the bias audit, a 4-model pool, preview sheets and the card."""
    out = tmp_path_factory.mktemp("pooled") / "out"
    proc = spare_gen_cli("run", "-c", str(REPO / "configs" / "default.toml"), "--out", str(out), *QUIET,
                         "--set", "models.csg.count=16", "--set", "questions.allow_fewer=true",
                         "--set", SMALL_COUNTS)
    assert proc.returncode == 0, proc.stderr
    assert validate(out) == []
    return out


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_validate_catches_every_kind_of_file_it_used_to_miss(pooled, tmp_path):
    overlay = pq.read_table(pooled / "corruptions.parquet", columns=["overlay_png"]).column(0).to_pylist()[0]
    preview = sorted(p.relative_to(pooled).as_posix() for p in (pooled / "preview").glob("*.png"))[0]
    vector = preview.removesuffix(".png") + ".svg"  # each sheet's SVG twin is recorded as the sheet is
    assert overlay.startswith("pool/") and overlay.endswith("_overlay.png")
    record = json.loads((pooled / "dataset.json").read_text())["files"]
    assert {overlay, preview, vector, "preview/corruptions.svg", "README.md", "reports/audit.json"} <= set(record)

    def damaged(name: str, damage) -> list[str]:
        copy = tmp_path / name
        shutil.copytree(pooled, copy, symlinks=True)
        damage(copy)
        return validate(copy)

    cases = {
        "overlay": (lambda d: _flip_a_byte(d / overlay), f"files: {overlay} changed: sha256 differs from dataset.json"),
        "preview": (lambda d: _flip_a_byte(d / preview), f"files: {preview} changed: sha256 differs from dataset.json"),
        "preview svg": (lambda d: (d / vector).unlink(), f"files: {vector} (recorded in dataset.json) does not exist"),
        "edited card": (lambda d: (d / "README.md").write_text((d / "README.md").read_text() + "\nedited\n"),
                        "files: README.md changed: sha256 differs from dataset.json"),
        "deleted card": (lambda d: (d / "README.md").unlink(),
                         "files: README.md (recorded in dataset.json) does not exist"),
        "deleted audit": (lambda d: (d / "reports" / "audit.json").unlink(),
                          "files: reports/audit.json (recorded in dataset.json) does not exist"),
        "stray at the top": (lambda d: (d / "extra.bin").write_bytes(b"x"), "stray: extra.bin is not spare_gen's"),
        "stray in the pool": (lambda d: (d / "pool" / "csg_000000" / "mine.png").write_bytes(b"x"),
                              "stray: pool/csg_000000/mine.png is not spare_gen's"),
        "stray in a table": (lambda d: (d / "views.parquet" / "_notes.txt").write_bytes(b"x"),
                             "stray: views.parquet/_notes.txt is not spare_gen's"),
    }
    for name, (damage, expected) in cases.items():
        problems = damaged(name.replace(" ", "_"), damage)
        assert len(problems) == 1 and problems[0].startswith(expected), (name, problems)
    copy = tmp_path / "stray_at_the_top"
    proc = spare_gen_cli("validate", str(copy))
    assert proc.returncode == 1 and (copy / "extra.bin").read_bytes() == b"x"  # listed, never removed


def test_a_rerun_keeps_a_users_file_inside_a_table_folder_and_rewrites_a_deleted_card(pooled, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(pooled, out, symlinks=True)
    (out / "views.parquet" / "_notes.txt").write_text("mine\n")
    card = (out / "README.md").read_bytes()
    (out / "README.md").unlink()
    proc = spare_gen_cli("run", "-c", str(REPO / "configs" / "default.toml"), "--out", str(out), *QUIET,
                         "--set", "models.csg.count=16", "--set", "questions.allow_fewer=true",
                         "--set", SMALL_COUNTS, "--stages", "models",
                         cwd=tmp_path)
    assert proc.returncode == 0 and "nothing to do" not in proc.stderr, proc.stderr
    assert (out / "README.md").read_bytes() == card
    assert (out / "views.parquet" / "_notes.txt").read_text() == "mine\n"
    assert len(shards.parts(out / "views.parquet")) == 1
    assert f"1 file(s) in {out} are not spare_gen's or were changed: kept (e.g. views.parquet/_notes.txt)" in proc.stderr
