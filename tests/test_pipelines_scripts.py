"""The user-facing scripts in pipelines/ run end to end on tiny inputs, as a user runs them (subprocesses)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, REAL_CAD

TINY = ["--set", "models.csg.count=48", "--set", "questions.counts.three_view_to_isometric=0",
        *[arg for task in ("isometric_to_pose", "pose_to_isometric", "isometric_view_generation",
                           "point_cloud_generation") for arg in ("--set", f"questions.counts.{task}=8")],
        "--set", "questions.split=[0.5,0.25,0.25]", "--set", "runner.progress=false", "--set", "runner.dashboard=false"]


def _script(name: str, *args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, str(REPO / "pipelines" / name), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("spare3d_csg") / "out"
    done = _script("regenerate_spare3d_csg.py", "--out", str(out), *TINY)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_paper_scale_script_regenerates_validates_and_audits_a_tiny_spare3d_csg(regenerated):
    for task in ("isometric_to_pose", "pose_to_isometric", "isometric_view_generation", "point_cloud_generation"):
        rows = sum(pq.read_metadata(p).num_rows for p in (regenerated / "questions" / task).glob("*.parquet"))
        assert rows == 8, task
    assert (regenerated / "reports" / "audit.json").is_file()  # the run audits what it wrote
    assert "## Bias audit" in (regenerated / "README.md").read_text()


def test_the_baseline_script_trains_and_scores_the_test_split(regenerated):
    done = _script("train_and_evaluate_baseline.py", str(regenerated), "--task", "isometric_to_pose",
                   "--epochs", "1", "--size", "16")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (regenerated / "baselines" / "isometric_to_pose" / "predictions_test.csv").is_file()
    assert "accuracy" in done.stdout.lower()


def test_the_cad_pool_script_builds_a_pool_from_a_folder_of_cad_files(tmp_path):
    cad = tmp_path / "cad"
    cad.mkdir()
    for name in ("bug3883_xr2-ct-214_l-bracket.stp", "nist_ctc_01.brep"):
        (cad / name).symlink_to(REAL_CAD / name)
    out = tmp_path / "pool"
    done = _script("pool_from_cad_for_rating.py", str(cad), "--out", str(out), "--models", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"spare-gen annotate {out}" in done.stdout
    wireframes = pq.read_table(out / "wireframes.parquet", columns=["status"]).column("status").to_pylist()
    assert wireframes == ["ok", "ok"]
    assert pq.read_metadata(out / "pairs.parquet").num_rows > 0


def test_a_script_given_a_missing_folder_says_so_in_one_line_and_exits_2(tmp_path):
    done = _script("pool_from_cad_for_rating.py", str(tmp_path / "no_such_folder"), "--out", str(tmp_path / "pool"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no_such_folder" in done.stderr.strip().splitlines()[-1]
