"""Model stage on a real embedded Dask cluster: file types, bad files, hangs, crashes, determinism, resume."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from spare_gen.jobs.regenerate import run
from spare_gen.store import shards
from spare_gen.config import load_config
from spare_gen.stages.models.schema import TIMING_COLUMNS
from tests.conftest import REPO

GOOD_FILES = [
    "bug3883_xr2-ct-214_l-bracket.stp", "io1-ug-214.stp", "nist_ctc_01.brep", "bearing.iges",
    "sheet_metal_54.brep", "red_cube_blue_cylinder.step", "ANC101.stp",
]


def _rows(out: Path) -> dict[str, dict]:
    return {r["model_id"]: r for r in pq.read_table(out / "models.parquet").to_pylist()}


def _content(out: Path) -> list[dict]:
    table = pq.read_table(out / "models.parquet")
    return table.drop_columns(list(TIMING_COLUMNS)).to_pylist()


def _run_models(out: Path, *overrides: str) -> dict[str, dict]:
    cfg = load_config(None, [f'out="{out}"', "runner.progress=false", "runner.dashboard=false", *overrides])
    run(cfg, stages=("models",))
    return _rows(out)


def test_each_file_type_loads_and_bad_files_become_failed_rows(tmp_path, real_cad):
    folder = tmp_path / "cad"
    folder.mkdir()
    for name in GOOD_FILES:
        shutil.copy(real_cad / name, folder / name)
    shutil.copy(real_cad / "io1-ug-214.stp", folder / "zz-io1-copy.step")  # same bytes: kept once
    (folder / "empty.step").write_bytes(b"")
    data = (real_cad / "bm2_ec_lever-A.stp").read_bytes()
    (folder / "truncated.step").write_bytes(data[: len(data) // 3])
    (folder / "notes.step").write_text("these are my notes, not a STEP file\n")
    (folder / "gone.step").symlink_to(folder / "does-not-exist.step")
    rows = _run_models(tmp_path / "out", "models.source=\"files\"", f'models.files.root="{folder}"')

    for name in GOOD_FILES:
        row = rows[Path(name).stem]
        assert row["status"] == "ok", (name, row["error"])
        assert row["n_faces"] > 0 and row["sha256"] and (tmp_path / "out" / row["step_path"]).is_file()
    assert rows["red_cube_blue_cylinder"]["n_solids"] == 2
    assert rows["sheet_metal_54"]["n_solids"] == 0 and rows["bearing"]["n_solids"] == 0
    assert rows["ANC101"]["n_faces"] == 87 and rows["nist_ctc_01"]["n_faces"] == 151

    copy = rows["zz-io1-copy"]
    assert copy["status"] == "skipped" and "identical content to io1-ug-214" in copy["error"]
    assert rows["empty"]["status"] == "failed" and "empty" in rows["empty"]["error"]
    assert rows["notes"]["status"] == "failed" and "not a STEP file" in rows["notes"]["error"]
    assert rows["gone"]["status"] == "failed" and "does not exist" in rows["gone"]["error"]
    assert rows["truncated"]["status"] == "failed" and "truncated" in rows["truncated"]["error"]
    for r in rows.values():
        assert "\n" not in r["error"]


def test_size_limit_skips_with_reason(tmp_path, real_cad):
    folder = tmp_path / "cad"
    folder.mkdir()
    shutil.copy(real_cad / "ANC101.stp", folder)
    shutil.copy(real_cad / "io1-ug-214.stp", folder)
    rows = _run_models(tmp_path / "out", 'models.source="files"', f'models.files.root="{folder}"',
                       "models.files.max_mb=0.1")
    assert rows["ANC101"]["status"] == "skipped" and "max_mb" in rows["ANC101"]["error"]
    assert rows["io1-ug-214"]["status"] == "ok"


def test_hang_and_crash_are_recorded_and_the_run_goes_on(tmp_path):
    rows = _run_models(tmp_path / "out", "models.csg.count=6", "runner.timeout_s=4",
                       'debug.hang=["csg_000001"]', 'debug.crash=["models:csg_000003"]')
    assert rows["csg_000001"]["status"] == "timeout" and "CPU budget of 4 s" in rows["csg_000001"]["error"]
    assert rows["csg_000003"]["status"] == "crashed" and "SIGABRT" in rows["csg_000003"]["error"]
    assert [rows[f"csg_{i:06d}"]["status"] for i in (0, 2, 4, 5)] == ["ok"] * 4


def test_same_output_with_one_and_two_workers(tmp_path):
    a = tmp_path / "w1"
    b = tmp_path / "w2"
    _run_models(a, "models.csg.count=9", "runner.workers=1", "seed=11")
    _run_models(b, "models.csg.count=9", "runner.workers=2", "seed=11")
    assert _content(a) == _content(b)
    assert sorted(p.name for p in (a / "models").iterdir()) == sorted(p.name for p in (b / "models").iterdir())
    for p in (a / "models").glob("*.step"):
        assert p.read_bytes() == (b / "models" / p.name).read_bytes()
    prims = [r["n_primitives"] for r in _content(a)]
    assert prims == [2, 3, 4] * 3
    _run_models(tmp_path / "other", "models.csg.count=9", "runner.workers=2", "seed=12")
    assert _content(tmp_path / "other") != _content(a)


def test_killed_run_resumes_to_the_same_result(tmp_path):
    count = 40
    ref = tmp_path / "ref"
    _run_models(ref, f"models.csg.count={count}", "runner.workers=2")

    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "spare_gen.cli", "run", "--stages", "models", "--out", str(out), "--no-progress",
           "--set", f"models.csg.count={count}", "--set", "runner.workers=2", "--set", "runner.dashboard=false",
           "--set", "runner.shard_units=1"]  # one Parquet part (and index file) per model
    proc = subprocess.Popen(cmd, cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    units = out / ".units" / "models"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = len(list(units.glob("*.json"))) if units.exists() else 0
        if done >= 5:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list(units.glob("*.json")))
    assert 5 <= done_before < count, "the kill should land mid-run"
    assert shards.num_rows(out / "models.parquet") < count  # the table is not complete

    rerun = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert "already done, resuming" in rerun.stderr
    assert _content(out) == _content(ref)
    for p in (ref / "models").glob("*.step"):
        assert p.read_bytes() == (out / "models" / p.name).read_bytes()
