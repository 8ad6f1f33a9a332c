"""Shared fixtures: paths to the real CAD files and a helper to run the CLI in-process or as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_CAD = (REPO.parent / "shared" / "cad").resolve()


@pytest.fixture(scope="session")
def shared_cad() -> Path:
    assert SHARED_CAD.is_dir(), f"real CAD test files expected in {SHARED_CAD}"
    return SHARED_CAD


def spare_gen_cli(*args: str, cwd: Path | None = None, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    """Run ``spare-gen`` as a new user would (a subprocess), capturing output."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-m", "spare_gen.cli", *args], cwd=cwd or REPO, capture_output=True, text=True,
        timeout=timeout, env=env, **kw,
    )


@pytest.fixture(scope="session")
def small_dataset(tmp_path_factory) -> Path:
    """The default config's full run (models, drawings, five tasks, corrupted pool), generated once per session.

    Tests that only read a dataset share this one; tests that damage a dataset copy it first.
    """
    from pipelines.regenerate import run
    from spare_gen.config import load_config

    out = tmp_path_factory.mktemp("small_dataset") / "out"
    cfg = load_config(REPO / "configs" / "default.toml",
                      [f'out="{out}"', "runner.progress=false", "runner.dashboard=false"])
    run(cfg)
    return out


TINY_OVERRIDES = [
    "models.csg.count=90", "pool.enabled=false", "questions.allow_fewer=true",
    "questions.counts.three_view_to_isometric=16", "questions.counts.isometric_to_pose=16",
    "questions.counts.pose_to_isometric=16", "questions.counts.isometric_view_generation=10",
    "questions.counts.point_cloud_generation=10",
]


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory) -> Path:
    """A real run small enough for audit, card and viewer tests: 90 CSG models, every task with 3 non-empty splits.

    No pool. Tests that damage it copy it first.
    """
    from pipelines.regenerate import run
    from spare_gen.config import load_config

    out = tmp_path_factory.mktemp("tiny_dataset") / "out"
    cfg = load_config(REPO / "configs" / "default.toml",
                      [f'out="{out}"', "runner.progress=false", "runner.dashboard=false", *TINY_OVERRIDES])
    run(cfg)
    return out
