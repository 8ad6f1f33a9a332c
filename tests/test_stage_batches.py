"""A large stage sends its units to the workers in batches: every unit keeps its own result, unit file, retries
and resume, exactly as when each unit is its own Dask task."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from distributed import Client, LocalCluster

from spare_gen.runner.contract import StageSettings
from spare_gen.runner.isolation import Status
from spare_gen.runner.stage import batch_size, read_unit_result, run_stage, unit_dir, unit_fingerprints

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


def with_x(units: list[dict], out_dir: str) -> list[dict]:
    """What a unit reads from the output folder, on a worker: its x, from a file there."""
    xs = (Path(out_dir) / "xs.txt").read_text().split()
    return [{**u, "x": int(xs[int(u["unit_id"][1:])])} for u in units]


def test_units_that_read_the_output_folder_load_it_on_the_workers_in_groups_with_the_same_fingerprints(tmp_path):
    settings = StageSettings(stage="squares", seed=0, out_dir=str(tmp_path), timeout_s=10)
    (tmp_path / "xs.txt").write_text(" ".join(str(i) for i in range(UNITS)))
    light = [{"unit_id": f"u{i:03d}"} for i in range(UNITS)]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rows = run_stage(client, square, light, settings, reply=small, expand=with_x)
        assert all(r["status"] == "ok" and r["y"] == i * i for i, r in enumerate(rows))
        # the unit files carry the fingerprints of the whole units, as if the client had added x itself
        whole = unit_fingerprints(with_x(light, str(tmp_path.resolve())), settings, str(tmp_path.resolve()))
        assert all(read_unit_result(tmp_path, "squares", uid) and _stored_fingerprint(tmp_path, uid) == fp
                   for uid, fp in whole.items())
        assert run_stage(client, refuse, light, settings, reply=small, expand=with_x) == rows  # all done
        # a changed input reruns just that unit
        (tmp_path / "xs.txt").write_text(" ".join(str(i if i != 5 else 6) for i in range(UNITS)))
        changed = run_stage(client, refuse, light, settings, reply=small, expand=with_x)
    assert [r["unit_id"] for r in changed if r["status"] == "failed"] == ["u005"]


def _stored_fingerprint(out: Path, uid: str) -> str:
    return json.loads(gzip.decompress((unit_dir(out, "squares") / f"{uid}.json.gz").read_bytes()))["unit_fingerprint"]
