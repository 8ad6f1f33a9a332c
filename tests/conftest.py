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
