"""A large stage sends its units to the workers in batches: every unit keeps its own result, unit file, retries
and resume, exactly as when each unit is its own Dask task."""

from __future__ import annotations

from pathlib import Path

from distributed import Client, LocalCluster

from spare_gen.runner.contract import StageSettings
from spare_gen.runner.isolation import Status
from spare_gen.runner.stage import batch_size, read_unit_result, run_stage

UNITS = 100
FLAKY = "u007"  # fails because of the machine once, then works


def square(unit: dict, settings: StageSettings) -> dict:
    marker = Path(settings.out_dir) / f"{unit['unit_id']}.tried"
    if unit["unit_id"] == FLAKY and not marker.exists():
        marker.touch()
        return {"status": Status.TRANSIENT.value, "error": "disk went away"}
    return {"status": Status.OK.value, "y": unit["x"] ** 2, "payload": list(range(unit["x"]))}


def refuse(unit: dict, settings: StageSettings) -> dict:
    return {"status": Status.FAILED.value, "error": "ran again"}


def small(result: dict) -> dict:
    return {k: result[k] for k in ("unit_id", "status", "y") if k in result}


def test_a_large_stage_runs_in_batches_and_each_unit_keeps_its_result_retries_and_resume(tmp_path):
    settings = StageSettings(stage="squares", seed=0, out_dir=str(tmp_path), timeout_s=10)
    units = [{"unit_id": f"u{i:03d}", "x": i} for i in range(UNITS)]
    assert batch_size(UNITS, 1) > 1 and batch_size(10, 1) == 1
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rows = run_stage(client, square, units, settings, reply=small)
        assert [r["unit_id"] for r in rows] == [u["unit_id"] for u in units]
        assert all(r["status"] == "ok" and r["y"] == i * i and set(r) == {"unit_id", "status", "y"}
                   for i, r in enumerate(rows))
        assert (tmp_path / f"{FLAKY}.tried").exists()  # failed once, retried, recorded once
        assert read_unit_result(tmp_path, "squares", "u042")["payload"] == list(range(42))  # the whole result
        again = run_stage(client, refuse, units, settings, reply=small)  # every unit done: none runs again
    assert again == rows
