"""Batch-job clusters through dask-jobqueue (job scripts, bad settings) and the shared-output-folder check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from distributed import Client

from spare_gen.config import load_config
from spare_gen.config.schema import ClusterKind
from spare_gen.runner.cluster import PROBE_PREFIX, ClusterError, check_shared_folder, jobqueue_cluster, queue_walltime
from tests.conftest import REPO, _start, spare_gen_cli

JOB_SETTINGS = [
    "runner.jobqueue.cores=4", 'runner.jobqueue.memory="16GB"', 'runner.jobqueue.walltime="02:30:00"',
    'runner.jobqueue.queue="short"', 'runner.jobqueue.account="lab42"',
    'runner.jobqueue.job_extra_directives=["--constraint=avx2"]',
    'runner.jobqueue.job_script_prologue=["module load gcc/12"]', 'runner.jobqueue.job_name="sg-test"',
    'runner.jobqueue.python="/opt/venv/bin/python"',
]


def _job_script(kind: str) -> str:
    config = load_config(None, [f"runner.cluster={kind}", *JOB_SETTINGS])
    cluster = jobqueue_cluster(config.runner)
    try:
        return cluster.job_script()
    finally:
        cluster.close()


def _worker_line(script: str) -> str:
    return next(line for line in script.splitlines() if "distributed.cli.dask_worker" in line)


def test_the_slurm_job_script_carries_every_jobqueue_setting():
    script = _job_script("slurm")
    directives = [line for line in script.splitlines() if line.startswith("#SBATCH")]
    for expected in ("#SBATCH -J sg-test", "#SBATCH -p short", "#SBATCH -A lab42", "#SBATCH --cpus-per-task=4",
                     "#SBATCH --mem=15G", "#SBATCH -t 02:30:00", "#SBATCH --constraint=avx2"):
        assert expected in directives, script
    lines = script.splitlines()
    assert "module load gcc/12" in lines
    assert f"export PYTHONPATH={REPO}${{PYTHONPATH:+:$PYTHONPATH}}" in lines  # the client's spare_gen
    assert "export OMP_NUM_THREADS=1" in lines
    worker = _worker_line(script).split()
    assert worker[0] == "/opt/venv/bin/python"
    assert worker[worker.index("--nthreads") + 1] == "1" and worker[worker.index("--nworkers") + 1] == "4"
    # the module loads come before the worker starts
    assert lines.index("module load gcc/12") < lines.index(_worker_line(script))


def test_the_pbs_job_script_carries_every_jobqueue_setting():
    script = _job_script("pbs")
    directives = [line for line in script.splitlines() if line.startswith("#PBS")]
    for expected in ("#PBS -N sg-test", "#PBS -q short", "#PBS -A lab42", "#PBS -l select=1:ncpus=4:mem=15GB",
                     "#PBS -l walltime=02:30:00", "#PBS --constraint=avx2"):
        assert expected in directives, script
    assert "module load gcc/12" in script.splitlines()
    worker = _worker_line(script).split()
    assert worker[0] == "/opt/venv/bin/python"
    assert worker[worker.index("--nthreads") + 1] == "1" and worker[worker.index("--nworkers") + 1] == "4"


def test_sge_and_lsf_charge_the_account_as_their_project():
    assert "#$ -P lab42" in _job_script("sge").splitlines()
    assert '#BSUB -P "lab42"' in _job_script("lsf").splitlines()


def test_walltimes_are_written_as_each_queue_system_reads_them():
    assert queue_walltime(ClusterKind.SLURM, "1-12:00:00") == "1-12:00:00"
    assert queue_walltime(ClusterKind.PBS, "1-12:00:00") == "36:00:00"
    assert queue_walltime(ClusterKind.SGE, "00:45") == "00:45:00"
    assert queue_walltime(ClusterKind.LSF, "02:30:01") == "02:31"
    assert queue_walltime(ClusterKind.LSF, "01:59:30") == "02:00"


@pytest.mark.parametrize("setting, named", [
    ('runner.jobqueue.memory="lots"', "runner.jobqueue.memory = 'lots'"),
    ('runner.jobqueue.walltime="2h"', "runner.jobqueue.walltime = '2h'"),
    ("runner.jobqueue.cores=0", "runner.jobqueue.cores = 0"),
    ("runner.jobqueue.jobs=0", "adaptive_max"),
    ("runner.jobqueue.partition=1", "unknown key 'runner.jobqueue.partition'"),
])
def test_bad_jobqueue_settings_stop_the_run_in_one_line_with_exit_2(tmp_path, setting, named):
    out = tmp_path / "out"
    proc = spare_gen_cli("run", "--cluster", "slurm", "--out", str(out), "--set", setting, "--no-progress")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    assert not out.exists()


def test_an_unknown_cluster_kind_is_refused_with_the_allowed_ones(tmp_path):
    proc = spare_gen_cli("run", "--out", str(tmp_path / "out"), "--set", "runner.cluster=condor")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "spare-gen: config error in --set runner.cluster=condor: runner.cluster = 'condor': input should be "
        "'local', 'scheduler', 'slurm', 'pbs', 'sge' or 'lsf'; allowed: local, scheduler, slurm, pbs, sge, lsf"]


def test_a_batch_cluster_without_its_submit_command_stops_before_any_work(tmp_path, monkeypatch):
    out = tmp_path / "out"
    bare = tmp_path / "bin"  # an empty PATH (the CLI runs by its full path): no sbatch, as outside the cluster
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    proc = spare_gen_cli("run", "--cluster", "slurm", "--out", str(out), "--no-progress")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == ["spare-gen: error: runner.cluster = 'slurm': the submit command 'sbatch' is not on PATH; "
                     "run spare-gen on a login node of the SLURM cluster"], proc.stderr
    assert not out.exists()


def test_workers_that_see_the_output_folder_pass_the_check_and_leave_no_probe(tmp_path, remote_scheduler):
    out = tmp_path / "out"
    out.mkdir()
    with Client(remote_scheduler, timeout="30s") as client:
        check_shared_folder(client, out, "test")
        assert len(client.scheduler_info()["workers"]) == 2
    assert list(out.iterdir()) == []


@pytest.fixture
def blind_worker_scheduler(tmp_path):
    """A real scheduler and a real worker whose view of ``tmp_path/out`` differs: the worker runs in its own mount
    namespace (an unprivileged user namespace) with an empty tmpfs mounted over that folder, as a compute node
    whose ``/scratch`` is local rather than shared."""
    if shutil.which("unshare") is None:
        pytest.fail("util-linux 'unshare' is needed to start a worker with its own view of the file system")
    out = tmp_path / "out"
    out.mkdir()
    sched_file = tmp_path / "scheduler.json"
    procs = [_start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--dashboard-address", ":0", "--scheduler-file", str(sched_file)], tmp_path / "scheduler.log")]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        worker = (f"mount -t tmpfs spare-gen-test {out} && exec {sys.executable} -m distributed.cli.dask_worker "
                  f"{address} --nthreads 1 --host 127.0.0.1 --no-dashboard")
        procs.append(_start(["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private",
                             "sh", "-c", worker], tmp_path / "worker.log"))
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(1, timeout=60)
        yield address, out
    finally:
        for p in reversed(procs):
            os.killpg(p.pid, 15)
            p.wait(timeout=30)


def test_a_worker_that_cannot_see_the_output_folder_stops_the_run_in_one_line(blind_worker_scheduler):
    address, out = blind_worker_scheduler
    proc = spare_gen_cli("run", "--scheduler", address, "--out", str(out), "--stages", "models", "--no-progress",
                         "--set", "models.csg.count=2")
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if not line.startswith("spare-gen: connected")]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"spare-gen: error: output folder {out} is not visible to the Dask worker ")
    assert f"(no file {PROBE_PREFIX}" in lines[0] and f"Dask scheduler {address} needs it on a file system" in lines[0]
    assert sorted(p.name for p in out.iterdir()) == []  # no work, no probe left behind


def test_the_check_names_the_blind_worker_when_called_directly(blind_worker_scheduler):
    address, out = blind_worker_scheduler
    with Client(address, timeout="30s") as client:
        (worker,) = client.scheduler_info()["workers"]
        with pytest.raises(ClusterError, match=f"not visible to the Dask worker {worker}"):
            check_shared_folder(client, out, "test")
