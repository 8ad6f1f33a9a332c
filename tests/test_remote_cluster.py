"""The same pipeline through a real ``dask scheduler`` and ``dask worker`` started as subprocesses on 127.0.0.1."""

from __future__ import annotations

import pyarrow.parquet as pq
from distributed import Client

from spare_gen.config import load_config
from spare_gen.jobs import regenerate
from tests.conftest import REPO, spare_gen_cli


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


def test_a_run_on_the_callers_own_client_leaves_it_open_and_makes_the_same_models(tmp_path, remote_scheduler):
    mine, cli = tmp_path / "mine", tmp_path / "cli"
    config = load_config(REPO / "configs" / "default.toml", [f'out="{mine}"', "runner.progress=false",
                                                             "models.csg.count=6", "seed=5"])
    with Client(remote_scheduler) as client:
        regenerate.run(config, stages=("models",), client=client)
        assert client.status == "running" and len(client.scheduler_info()["workers"]) == 2
        assert client.submit(sum, [1, 2]).result() == 3
    proc = spare_gen_cli("run", "--workers", "1", "--out", str(cli), "--stages", "models", "--no-progress",
                         "--set", "models.csg.count=6", "--set", "seed=5")
    assert proc.returncode == 0, proc.stderr
    assert pq.read_table(mine / "models.parquet").equals(pq.read_table(cli / "models.parquet"))


def test_metric_report_runs_on_a_real_scheduler_and_matches_the_embedded_cluster(small_dataset, tmp_path,
                                                                                  remote_scheduler):
    reports, said = {}, {}
    for name, where in (("remote", ["--scheduler", remote_scheduler]), ("local", ["--workers", "1"])):
        out = tmp_path / name
        out.mkdir()
        (out / "wireframes.parquet").symlink_to(small_dataset / "wireframes.parquet")
        proc = spare_gen_cli("metric-report", str(out), "--max-models", "2", *where)
        assert proc.returncode == 0, proc.stderr
        reports[name] = {p.name: p.read_bytes() for p in (out / "reports").iterdir()}
        said[name] = proc.stderr
    assert f"connected to Dask scheduler {remote_scheduler} (2 workers)" in said["remote"]
    assert reports["remote"] == reports["local"] and set(reports["local"]) == {"metric_properties.md",
                                                                            "metric_properties.parquet"}


def test_metric_report_names_an_unreachable_scheduler_in_one_line(small_dataset, tmp_path):
    out = tmp_path / "pool"
    out.mkdir()
    (out / "wireframes.parquet").symlink_to(small_dataset / "wireframes.parquet")
    proc = spare_gen_cli("metric-report", str(out), "--max-models", "2", "--scheduler", "tcp://127.0.0.1:9")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Dask scheduler tcp://127.0.0.1:9" in lines[0], proc.stderr
    assert not (out / "reports").exists()
