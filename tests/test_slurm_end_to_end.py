"""``spare-gen run --cluster slurm`` end to end on a real single-node SLURM (Debian slurm-wlm) started by the test."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import differing_files, spare_gen_cli

DAEMONS = ("slurmctld", "slurmd")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _slurm_conf(root: Path) -> str:
    host = socket.gethostname()
    return "\n".join([
        "ClusterName=sgtest", f"SlurmctldHost={host}(127.0.0.1)", f"SlurmctldPort={_free_port()}",
        f"SlurmdPort={_free_port()}", "SlurmUser=root", "AuthType=auth/none", "CredType=cred/none",
        "MpiDefault=none", "ProctrackType=proctrack/pgid", "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
        "ReturnToService=2", f"StateSaveLocation={root / 'state'}", f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}", f"SlurmdPidFile={root / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'slurmctld.log'}", f"SlurmdLogFile={root / 'slurmd.log'}",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 State=UNKNOWN",
        f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP", "",
    ])


@pytest.fixture
def single_node_slurm(tmp_path, monkeypatch):
    """slurmctld and slurmd on this machine (2 CPUs, partition 'debug'), no munge; SLURM_CONF points at them."""
    missing = [d for d in (*DAEMONS, "sbatch", "sinfo") if shutil.which(d) is None]
    if missing:
        pytest.fail(f"Debian package slurm-wlm is needed for this test ({', '.join(missing)} not found)")
    if os.geteuid() != 0:
        pytest.fail("the single-node SLURM of this test runs its slurmd as root")
    root = tmp_path / "slurm"
    for sub in ("state", "spool"):
        (root / sub).mkdir(parents=True)
    conf = root / "slurm.conf"
    conf.write_text(_slurm_conf(root))
    monkeypatch.setenv("SLURM_CONF", str(conf))
    procs = [subprocess.Popen([d, "-D", *(["-i"] if d == "slurmctld" else [])], stdout=open(root / f"{d}.out", "w"),
                              stderr=subprocess.STDOUT, start_new_session=True) for d in DAEMONS]
    try:
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True).stdout.strip()
            if state == "idle":
                break
            time.sleep(0.5)
        assert state == "idle", (root / "slurmctld.log").read_text()[-2000:]
        yield root
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.wait(timeout=30)


def test_a_run_on_slurm_jobs_writes_the_same_bytes_as_the_embedded_cluster_and_ends_its_jobs(tmp_path,
                                                                                              single_node_slurm):
    common = ["--no-progress", "--stages", "models,drawings", "--set", "models.csg.count=6", "--set", "seed=11"]
    logs = tmp_path / "job-logs"
    proc = spare_gen_cli(
        "run", "--cluster", "slurm", "--out", str(tmp_path / "out-slurm"), *common,
        "--set", "runner.jobqueue.cores=2", "--set", 'runner.jobqueue.memory="2GB"',
        "--set", 'runner.jobqueue.queue="debug"', "--set", 'runner.jobqueue.walltime="00:20:00"',
        "--set", f'runner.jobqueue.log_directory="{logs}"', "--set", "runner.jobqueue.wait_s=300",
    )
    assert proc.returncode == 0, proc.stderr
    assert "SLURM cluster: 1 job(s) of 2 worker(s) with 1 thread each" in proc.stderr
    # the job ran its two single-threaded workers under SLURM and was cancelled when the run ended
    (err,) = logs.glob("spare-gen-*.err")
    assert "CANCELLED" in err.read_text()
    deadline = time.monotonic() + 60
    while subprocess.run(["squeue", "-h", "-t", "R,PD"], capture_output=True, text=True).stdout.strip():
        assert time.monotonic() < deadline, "the run's SLURM job is still running"
        time.sleep(0.5)
    proc = spare_gen_cli("run", "--workers", "1", "--out", str(tmp_path / "out-local"), *common)
    assert proc.returncode == 0, proc.stderr
    assert differing_files(tmp_path / "out-slurm", tmp_path / "out-local") == []


def test_a_partition_slurm_refuses_stops_the_run_in_one_line_with_exit_2(tmp_path, single_node_slurm):
    out = tmp_path / "out"
    proc = spare_gen_cli("run", "--cluster", "slurm", "--out", str(out), "--no-progress", "--stages", "models",
                         "--set", 'runner.jobqueue.queue="nosuch"', "--set", "runner.jobqueue.wait_s=120")
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.strip().splitlines() if "waiting for the first worker" not in line]
    assert lines == ["spare-gen: error: SLURM cluster: sbatch refused the job: sbatch: error: invalid partition "
                     "specified: nosuch; sbatch: error: Batch job submission failed: Invalid partition name "
                     "specified (see runner.jobqueue)"], proc.stderr
    assert not out.exists()
