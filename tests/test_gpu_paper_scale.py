"""benchmarks/gpu: the preparation script builds the carry folders and the device script trains from them, here on a
CPU with the device's file layout, writing its results after each cell."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

from tests.conftest import REPO  # noqa: E402


def test_the_device_script_runs_end_to_end_on_a_cpu_from_prepared_carry_folders(tiny_dataset, tmp_path):
    gpu, out = tmp_path / "gpu", tmp_path / "out"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    prep = subprocess.run([sys.executable, "benchmarks/gpu/prepare_paper_scale.py", "--paper", str(tiny_dataset),
                           "--default-poses", str(tiny_dataset), "--dest", str(gpu), "--size", "40",
                           "--xz-preset", "1", "--no-wheels"], cwd=REPO, capture_output=True, text=True, env=env,
                          timeout=600)
    assert prep.returncode == 0, prep.stderr
    plan = (gpu / "plan.txt").read_text()
    assert plan.startswith('call 1: carry ["') and "bash benchmarks/gpu/paper_scale.sh" in plan
    assert sorted(p.name for p in (gpu / "call1" / "caches").iterdir()) == ["default_poses", "paper"]
    env.update(OUT=str(out), PY=sys.executable, STATE=str(tmp_path / "state"),
               EXTRA="--device cpu --epochs 1 --arch small --tiers 4")
    run = subprocess.run(["bash", "benchmarks/gpu/paper_scale.sh", str(gpu / "call1"), "300"], cwd=REPO,
                         capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert {"log.txt", "table.md", "figure6.png"} <= {p.name for p in out.iterdir()}
    paper = json.loads((out / f"{tiny_dataset.name}.json").read_text())
    assert paper["dataset"]["config"] == tiny_dataset.name and paper["dataset"]["role"] == "paper"
    assert paper["dataset"]["poses"] == [1, 2, 3, 4]  # the tiny run's default poses, as its header says
    cells = [c["cell"] for c in paper["cells"]]
    assert cells == ["isometric_to_pose/multiclass/small", "isometric_to_pose/multiclass/small/blank-views",
                     "isometric_to_pose/multiclass/small", "three_view_to_isometric/binary/small"]
    assert all(set(c["per_epoch"]) == {"train", "val", "test"} and c["epochs_run"] == 1 for c in paper["cells"])
    default = json.loads((out / f"{tiny_dataset.name}-default_poses.json").read_text())
    assert len(default["cells"]) == 2 and default["dataset"]["role"] == "default_poses"
    # a second call on the same machine trains nothing twice
    again = subprocess.run(["bash", "benchmarks/gpu/paper_scale.sh", str(gpu / "call1"), "300"], cwd=REPO,
                           capture_output=True, text=True, env=env, timeout=900)
    assert again.returncode == 0 and "6 cells done before" in again.stdout
