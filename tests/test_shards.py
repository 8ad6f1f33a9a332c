"""Tables written as Parquet parts by the workers: row order, readers, resume data size, reuse of rows."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import cloudpickle

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spare_gen.store import shards
from spare_gen.canvas.poses import FIXED_VIEWS
from spare_gen.runner.cluster import open_client
from spare_gen.runner.contract import RunOptions, StageSettings
from spare_gen.runner.isolation import Status
from spare_gen.runner.results import Timed
from spare_gen.runner.sharded import TableOut, run_sharded_stage

SHARDED = ("models.parquet", "drawings.parquet", "views.parquet")
ROWS_SCHEMA = pa.schema([("model_id", pa.string()), ("k", pa.int64()), ("value", pa.float64())])


def test_sharded_tables_keep_unit_order_and_load_with_pyarrow_pandas_and_datasets(small_dataset):
    from datasets import load_dataset

    for name in SHARDED:
        folder = small_dataset / name
        parts = shards.parts(folder)
        assert folder.is_dir() and len(parts) >= 2, name  # the default config's 240 models: several parts
        assert [p.name[:10] for p in parts] == [f"part-{i:05d}" for i in range(len(parts))]
        whole = pq.read_table(folder)
        assert whole.equals(pa.concat_tables([pq.read_table(p) for p in parts]))
        ids = whole.column("model_id").to_pylist()
        assert ids == sorted(ids), f"{name}: rows in model_id order across parts"
        frame = pd.read_parquet(folder)
        assert frame["model_id"].tolist() == ids
        hf = load_dataset("parquet", data_files=str(folder / "*.parquet"), split="train")
        assert hf["model_id"] == ids
    views = pq.read_table(small_dataset / "views.parquet", columns=["model_id", "view", "visible"]).to_pylist()
    first = [v["view"] for v in views if v["model_id"] == views[0]["model_id"]]
    assert first[:len(FIXED_VIEWS)] == list(FIXED_VIEWS)  # each model's views in pose order, as drawn
    hf_views = load_dataset("parquet", data_files=str(small_dataset / "views.parquet" / "*.parquet"), split="train")
    assert hf_views[0]["visible"] == views[0]["visible"]


def test_resume_data_is_under_five_percent_of_the_output(small_dataset):
    def size(paths) -> int:  # bytes on disk: a staged cut file a question uses is a hard link to the published one
        return sum(p.stat().st_size for p in {p.stat().st_ino: p for p in paths if p.is_file()}.values())

    everything = list(small_dataset.rglob("*"))
    output_files = [p for p in everything if ".units" not in p.relative_to(small_dataset).parts]
    published = {p.stat().st_ino for p in output_files if p.is_file()}
    resume = size(p for p in everything if ".units" in p.relative_to(small_dataset).parts
                  and p.is_file() and p.stat().st_ino not in published)
    output = size(output_files)
    assert resume > 0
    assert resume <= 0.05 * output, f"resume data {resume / 1e6:.2f} MB of {output / 1e6:.1f} MB output"
    index = json.loads(next((small_dataset / ".units" / "drawings").glob("part-*.json")).read_text())
    entry = next(iter(index["units"].values()))
    assert set(entry) == {"fingerprint", "status", "error", "files"}  # where the rows are, not the rows


# ------------------------------------------------------------------------------- the runner, with a cheap task

CALLS = "calls"


@dataclass(frozen=True, kw_only=True)
class RowsResult(Timed):
    unit_id: str
    status: str = "ok"
    error: str = ""
    rows: list[dict] = field(default_factory=list)

    def record(self) -> dict:
        return {"unit_id": self.unit_id, "status": self.status, "error": self.error, "rows": self.rows}

    @classmethod
    def from_record(cls, record) -> "RowsResult":
        return cls(**record)

    @classmethod
    def failure(cls, unit_id: str, status: Status, error: str) -> "RowsResult":
        return cls(unit_id=unit_id, status=status.value, error=error)


class CheapSettings(StageSettings):
    RESULT: ClassVar = RowsResult


def counted_rows(unit: dict, settings) -> RowsResult:
    """A cheap unit: three rows drawn from the unit's generator; each call leaves a file, to count runs."""
    marker = Path(settings.out_dir) / CALLS / f"{unit['unit_id']}-{unit.get('version', 0)}"
    marker.parent.mkdir(parents=True, exist_ok=True)
    with open(marker, "a") as fh:
        fh.write("x")
    rng = settings.unit_rng(unit["unit_id"])
    rows = [{"model_id": unit["model_id"], "k": k, "value": float(rng.uniform()) + unit.get("version", 0)}
            for k in range(3)]
    return RowsResult(unit_id=unit["unit_id"], rows=rows)


def rows_of(result: RowsResult) -> list[dict]:
    return result.rows


TABLE = (TableOut("rows.parquet", ROWS_SCHEMA, rows_of),)
cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module


def _stage(client, out: Path, units: list[dict], shard_units: int) -> pa.Table:
    settings = CheapSettings(stage="cheap", seed=3, out_dir=str(out), timeout_s=10)
    run_sharded_stage(client, counted_rows, units, settings, TABLE, RunOptions(shard_units=shard_units, progress=False))
    return pq.read_table(out / "rows.parquet")


def _calls(out: Path) -> int:
    return sum(len(p.read_text()) for p in (out / CALLS).iterdir())


@pytest.fixture(scope="module")
def client():
    with open_client("", 2, dashboard=False, quiet=True) as c:
        yield c


def test_a_changed_unit_reruns_alone_and_the_rest_is_copied_from_the_old_parts(client, tmp_path):
    units = [{"unit_id": f"m{i:03d}", "model_id": f"m{i:03d}"} for i in range(10)]
    first = _stage(client, tmp_path / "reused", units, 4)
    assert first.num_rows == 30 and len(shards.parts(tmp_path / "reused" / "rows.parquet")) == 3
    assert _calls(tmp_path / "reused") == 10
    again = _stage(client, tmp_path / "reused", units, 4)
    assert again.equals(first) and _calls(tmp_path / "reused") == 10  # nothing ran

    changed = [dict(u, version=1) if u["unit_id"] == "m005" else u for u in units]
    reused = _stage(client, tmp_path / "reused", changed, 4)
    assert _calls(tmp_path / "reused") == 11  # only m005 ran again
    fresh = _stage(client, tmp_path / "fresh", changed, 4)
    assert reused.equals(fresh)
    reused_parts, fresh_parts = (shards.parts(tmp_path / run / "rows.parquet") for run in ("reused", "fresh"))
    assert [p.name for p in reused_parts] == [p.name for p in fresh_parts]  # stale parts removed
    assert [p.read_bytes() for p in reused_parts] == [p.read_bytes() for p in fresh_parts]  # copied rows: same bytes

    regrouped = _stage(client, tmp_path / "reused", changed + [{"unit_id": "m010", "model_id": "m010"}], 3)
    assert _calls(tmp_path / "reused") == 12  # other shard boundaries: rows copied, only the new unit ran
    assert regrouped.slice(0, 30).equals(fresh) and regrouped.num_rows == 33
