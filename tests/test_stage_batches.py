"""A large stage sends its units to the workers in batches: every unit keeps its own result, unit file, retries
and resume, exactly as when each unit is its own Dask task."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from distributed import Client, LocalCluster

from spare_gen.runner.contract import StageSettings
from spare_gen.runner.isolation import Status
from spare_gen.runner.results import Timed
from spare_gen.runner.stage import batch_size, read_unit_result, run_stage, unit_dir, unit_fingerprints

UNITS = 100
FLAKY = "u007"  # fails because of the machine once, then works


@dataclass(frozen=True, kw_only=True)
class SquareResult(Timed):
    unit_id: str
    status: str
    error: str = ""
    y: int | None = None
    payload: list[int] = field(default_factory=list)

    def record(self) -> dict:
        return {"unit_id": self.unit_id, "status": self.status, "error": self.error, "y": self.y,
                "payload": self.payload}

    @classmethod
    def from_record(cls, record) -> "SquareResult":
        return cls(**record)

    @classmethod
    def failure(cls, unit_id: str, status: Status, error: str) -> "SquareResult":
        return cls(unit_id=unit_id, status=status.value, error=error)


class SquareSettings(StageSettings):
    RESULT: ClassVar = SquareResult


def square(unit: dict, settings: StageSettings) -> SquareResult:
    marker = Path(settings.out_dir) / f"{unit['unit_id']}.tried"
    if unit["unit_id"] == FLAKY and not marker.exists():
        marker.touch()
        return SquareResult.failure(unit["unit_id"], Status.TRANSIENT, "disk went away")
    return SquareResult(unit_id=unit["unit_id"], status=Status.OK.value, y=unit["x"] ** 2,
                        payload=list(range(unit["x"])))


def refuse(unit: dict, settings: StageSettings) -> SquareResult:
    return SquareResult.failure(unit["unit_id"], Status.FAILED, "ran again")


def small(result: SquareResult) -> SquareResult:
    return replace(result, payload=[])


def test_a_large_stage_runs_in_batches_and_each_unit_keeps_its_result_retries_and_resume(tmp_path):
    settings = SquareSettings(stage="squares", seed=0, out_dir=str(tmp_path), timeout_s=10)
    units = [{"unit_id": f"u{i:03d}", "x": i} for i in range(UNITS)]
    assert batch_size(UNITS, 1) > 1 and batch_size(10, 1) == 1
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rows = run_stage(client, square, units, settings, reply=small)
        assert [r.unit_id for r in rows] == [u["unit_id"] for u in units]
        assert all(r.status == "ok" and r.y == i * i and r.payload == [] for i, r in enumerate(rows))
        assert (tmp_path / f"{FLAKY}.tried").exists()  # failed once, retried, recorded once
        assert read_unit_result(tmp_path, "squares", "u042", SquareResult).payload == list(range(42))  # the whole result
        again = run_stage(client, refuse, units, settings, reply=small)  # every unit done: none runs again
    assert [r.record() for r in again] == [r.record() for r in rows]


def with_x(units: list[dict], out_dir: str) -> list[dict]:
    """What a unit reads from the output folder, on a worker: its x, from a file there."""
    xs = (Path(out_dir) / "xs.txt").read_text().split()
    return [{**u, "x": int(xs[int(u["unit_id"][1:])])} for u in units]


def test_units_that_read_the_output_folder_load_it_on_the_workers_in_groups_with_the_same_fingerprints(tmp_path):
    settings = SquareSettings(stage="squares", seed=0, out_dir=str(tmp_path), timeout_s=10)
    (tmp_path / "xs.txt").write_text(" ".join(str(i) for i in range(UNITS)))
    light = [{"unit_id": f"u{i:03d}"} for i in range(UNITS)]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rows = run_stage(client, square, light, settings, reply=small, expand=with_x)
        assert all(r.status == "ok" and r.y == i * i for i, r in enumerate(rows))
        # the unit files carry the fingerprints of the whole units, as if the client had added x itself
        whole = unit_fingerprints(with_x(light, str(tmp_path.resolve())), settings, str(tmp_path.resolve()))
        assert all(read_unit_result(tmp_path, "squares", uid, SquareResult) and _stored_fingerprint(tmp_path, uid) == fp
                   for uid, fp in whole.items())
        done = run_stage(client, refuse, light, settings, reply=small, expand=with_x)  # all done: none runs again
        assert [r.record() for r in done] == [r.record() for r in rows]
        # a changed input reruns just that unit
        (tmp_path / "xs.txt").write_text(" ".join(str(i if i != 5 else 6) for i in range(UNITS)))
        changed = run_stage(client, refuse, light, settings, reply=small, expand=with_x)
    assert [r.unit_id for r in changed if r.status == "failed"] == ["u005"]


def _stored_fingerprint(out: Path, uid: str) -> str:
    return json.loads(gzip.decompress((unit_dir(out, "squares") / f"{uid}.json.gz").read_bytes()))["unit_fingerprint"]
