"""The same pipeline through a real ``dask scheduler`` and ``dask worker`` started as subprocesses on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, spare_gen_cli

DASK = [sys.executable, "-m", "distributed.cli"]


def _start(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(args, cwd=REPO, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture
def remote_scheduler(tmp_path):
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


def test_pipeline_runs_on_a_real_scheduler_and_workers(tmp_path, remote_scheduler):
    remote, local = tmp_path / "remote", tmp_path / "local"
    common = ["--stages", "models", "--no-progress", "--set", "models.csg.count=8", "--set", "seed=5"]
    proc = spare_gen_cli("run", "--scheduler", remote_scheduler, "--out", str(remote), *common)
    assert proc.returncode == 0, proc.stderr
    assert f"connected to Dask scheduler {remote_scheduler} (2 workers)" in proc.stderr
    proc = spare_gen_cli("run", "--workers", "1", "--out", str(local), *common)
    assert proc.returncode == 0, proc.stderr
    a = pq.read_table(remote / "models.parquet").drop_columns(["seconds"])
    b = pq.read_table(local / "models.parquet").drop_columns(["seconds"])
    assert a.equals(b)
    assert a.num_rows == 8 and set(a.column("status").to_pylist()) == {"ok"}
