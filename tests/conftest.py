"""Shared fixtures: paths to the real CAD files and a helper to run the CLI in-process or as a subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REAL_CAD = REPO / "tests" / "data" / "cad"  # real CAD files written by others (sources and licences in its README)


@pytest.fixture(scope="session", autouse=True)
def feed_cache_in_a_temporary_folder(tmp_path_factory):
    """The training feed's decoded caches (``spare_gen.data.feed``) go to a session folder, never the user's cache."""
    os.environ["SPARE_GEN_CACHE"] = str(tmp_path_factory.mktemp("feed_cache"))


@pytest.fixture(scope="session")
def real_cad() -> Path:
    return REAL_CAD


def spare_gen_cli(*args: str, cwd: Path | None = None, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    """Run ``spare-gen`` as a new user would (a subprocess), capturing output."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-m", "spare_gen.cli", *args], cwd=cwd or REPO, capture_output=True, text=True,
        timeout=timeout, env=env, **kw,
    )


# what the base install (`pip install -e .`, no extras) lacks: torch and the packages only torch brings
TORCH_PACKAGES = ("torch", "functorch", "torchgen", "nvidia", "triton")


@pytest.fixture(scope="session")
def python_without_torch(tmp_path_factory) -> Path:
    """The interpreter of a real venv in which torch is absent: every package of the test venv but torch's, as links.

    Its site-packages links each entry of this interpreter's site-packages except torch and its own packages (and
    the ``.pth`` files, so this checkout is found through ``PYTHONPATH`` alone): ``import torch`` fails as on a
    machine where the extra was never installed, and ``importlib.util.find_spec("torch")`` is None.
    """
    venv = tmp_path_factory.mktemp("no_torch") / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    target = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    for source in {Path(sysconfig.get_path("purelib")), Path(sysconfig.get_path("platlib"))}:
        for entry in source.iterdir():
            if entry.name.lower().startswith(TORCH_PACKAGES) or entry.suffix == ".pth" or (target / entry.name).exists():
                continue
            (target / entry.name).symlink_to(entry)
    python = venv / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import importlib.util, numpy; print(importlib.util.find_spec('torch'))"],
                           capture_output=True, text=True, timeout=120)
    assert probe.stdout.strip() == "None", probe.stderr
    return python


def without_torch_env() -> dict[str, str]:
    """The environment of a command run by ``python_without_torch``: this checkout on the path, nothing else."""
    return dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", NO_MKDOCS_2_WARNING="1")


@pytest.fixture(scope="session")
def small_dataset(tmp_path_factory) -> Path:
    """The default config's full run (models, drawings, five tasks, corrupted pool), generated once per session.

    Tests that only read a dataset share this one; tests that damage a dataset copy it first.
    """
    from spare_gen.jobs.regenerate import run
    from spare_gen.config import load_config

    out = tmp_path_factory.mktemp("small_dataset") / "out"
    cfg = load_config(REPO / "configs" / "default.toml",
                      [f'out="{out}"', "runner.progress=false", "runner.dashboard=false"])
    run(cfg)
    return out


# Files that record how and how long a run went, not what it produced (the README's "Guarantees").
BOOKKEEPING = ("run.json", "timings/", "questions/timings.json", ".units/written.json")


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (relative POSIX paths), run bookkeeping left out."""
    out = {}
    for p in sorted(Path(root).rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(BOOKKEEPING) and rel not in BOOKKEEPING:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def differing_files(a: Path, b: Path, ignore: tuple[str, ...] = ()) -> list[str]:
    """Files that differ between two dataset folders (missing on one side counts), for an assert message.

    ``ignore``: paths, or folder prefixes ending in "/", left out of the comparison.
    """
    ha, hb = file_hashes(a), file_hashes(b)
    return sorted(k for k in set(ha) | set(hb)
                  if ha.get(k) != hb.get(k) and k not in ignore and not k.startswith(tuple(i for i in ignore
                                                                                            if i.endswith("/"))))


def _start(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(args, cwd=REPO, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture
def remote_scheduler(tmp_path):
    """A real ``dask scheduler`` and a ``dask worker`` with 2 worker processes, on 127.0.0.1."""
    sched_file = tmp_path / "scheduler.json"
    procs = [_start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--dashboard-address", ":0", "--scheduler-file", str(sched_file)], tmp_path / "scheduler.log")]
    deadline = time.monotonic() + 60
    while not sched_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sched_file.exists(), (tmp_path / "scheduler.log").read_text()
    address = json.loads(sched_file.read_text())["address"]
    procs.append(_start([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                         "--nworkers", "2", "--host", "127.0.0.1", "--no-dashboard"], tmp_path / "worker.log"))
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(2, timeout=60)
    yield address
    for p in reversed(procs):
        os.killpg(p.pid, 15)
        p.wait(timeout=30)

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
    from spare_gen.jobs.regenerate import run
    from spare_gen.config import load_config

    out = tmp_path_factory.mktemp("tiny_dataset") / "out"
    cfg = load_config(REPO / "configs" / "default.toml",
                      [f'out="{out}"', "runner.progress=false", "runner.dashboard=false", *TINY_OVERRIDES])
    run(cfg)
    return out


QUIZ_COUNTS = "{three_view_to_isometric = 10, isometric_to_pose = 10, pose_to_isometric = 10, " \
              "isometric_view_generation = 0, point_cloud_generation = 0}"


def _quiz_run(out: Path, *overrides: str) -> Path:
    from spare_gen.jobs.regenerate import run
    from spare_gen.config import load_config

    cfg = load_config(REPO / "configs" / "default.toml",
                      [f'out="{out}"', "runner.progress=false", "runner.dashboard=false", "models.csg.count=30",
                       "pool.enabled=false", "questions.allow_fewer=true", f"questions.counts={QUIZ_COUNTS}",
                       *overrides])
    run(cfg, stages=("models", "drawings", "questions"))
    return out


@pytest.fixture(scope="session")
def quiz_dataset(tmp_path_factory) -> Path:
    """A real run of the three multiple-choice tasks only (30 CSG models, a third per task; 8 train, 1 val, 1 test question per task),
    for the quiz tests: models, drawings and questions, no pool, card or audit."""
    return _quiz_run(tmp_path_factory.mktemp("quiz_dataset") / "out")


@pytest.fixture(scope="session")
def quiz_dataset_spare3d_poses(tmp_path_factory) -> Path:
    """``quiz_dataset`` with SPARE3D's own pose choices (``questions.pose_choices=spare3d``, as
    configs/spare3d_csg_original.toml): Isometric to Pose's buttons read poses that are not the keys' numbers."""
    return _quiz_run(tmp_path_factory.mktemp("quiz_dataset_spare3d") / "out", 'questions.pose_choices="spare3d"')
