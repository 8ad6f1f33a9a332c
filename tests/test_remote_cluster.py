"""The same pipeline through a real ``dask scheduler`` and ``dask worker`` started as subprocesses on 127.0.0.1."""

from __future__ import annotations

import pyarrow.parquet as pq

from tests.conftest import spare_gen_cli


def test_pipeline_runs_on_a_real_scheduler_and_workers(tmp_path, remote_scheduler):
    remote, local = tmp_path / "remote", tmp_path / "local"
    common = ["--stages", "models", "--no-progress", "--set", "models.csg.count=8", "--set", "seed=5"]
    proc = spare_gen_cli("run", "--scheduler", remote_scheduler, "--out", str(remote), *common)
    assert proc.returncode == 0, proc.stderr
    assert f"connected to Dask scheduler {remote_scheduler} (2 workers)" in proc.stderr
    proc = spare_gen_cli("run", "--workers", "1", "--out", str(local), *common)
    assert proc.returncode == 0, proc.stderr
    a = pq.read_table(remote / "models.parquet")
    b = pq.read_table(local / "models.parquet")
    assert a.equals(b)
    assert a.num_rows == 8 and set(a.column("status").to_pylist()) == {"ok"}
