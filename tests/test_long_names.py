"""Inputs that used to wedge a run: a file deep in folders, a very long file name, an input path the system refuses.

Every file gets a row, the run exits 0, a rerun finds nothing to do; an OSError the input decides (a path too
long) is the file's failed row, not a machine fault that every rerun repeats.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spare_gen.atomic import bounded_name, write_text
from spare_gen.config import load_config
from spare_gen.stages.models.files import MODEL_ID_CHARS, discover, model_id_for
from spare_gen.stages.models.settings import ModelSettings
from spare_gen.stages.models.worker import model_task
from tests.conftest import spare_gen_cli

DEEP_FILE = "io1-ug-214.stp"
LONG_FILE = "bug3883_xr2-ct-214_l-bracket.stp"
LONG_NAME = "L" * 236 + ".stp"  # 240 characters: legal (255 is the limit), but no room for suffixes
# two file models: at most two questions in all (each model serves one), one in each of two tasks
SMALL_JOB = ["--set", "runner.dashboard=false", "--set", "runner.workers=1", "--set", "questions.allow_fewer=true",
             "--set", "pool.models=2", "--set", "render.exact_timeout_s=4",
             "--set", "questions.counts={three_view_to_isometric = 1, isometric_to_pose = 0, pose_to_isometric = 0, "
                      "isometric_view_generation = 1, point_cloud_generation = 0}"]


@pytest.fixture
def public_tmp():
    folder = Path(tempfile.mkdtemp(prefix="spare_gen-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _deep_folder(base: Path, depth: int, width: int, copy: Path | None = None) -> Path:
    """``depth`` nested folders of ``width``-character names, made one level at a time (the whole path may be
    longer than the system's PATH_MAX, which ``os.makedirs`` cannot make), holding a copy of ``copy`` if given."""
    fd = os.open(base, os.O_RDONLY)
    names = [f"f{i:02d}".ljust(width, "x") for i in range(depth)]
    for name in names:
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    if copy is not None:
        with open(os.open(copy.name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as out:
            out.write(copy.read_bytes())
    os.close(fd)
    return base.joinpath(*names)


def test_a_long_name_is_cut_and_hashed_and_short_names_stay_as_they_are():
    assert bounded_name("io1-ug-214", 96) == "io1-ug-214"
    a, b = bounded_name("x" * 300 + "a", 96), bounded_name("x" * 300 + "b", 96)
    assert a != b and len(a) == len(b) == 96 and a.startswith("x" * 79 + "-")
    assert len(bounded_name("é" * 200, 96).encode()) <= 96  # bytes count, not characters
    root = Path("/data")
    deep = root.joinpath(*[f"f{i:02d}" for i in range(60)], "part.step")
    assert len(model_id_for(deep, root)) == MODEL_ID_CHARS
    assert model_id_for(root / "part.step", root) == "part"


def test_an_atomic_write_to_a_long_legal_name_succeeds(public_tmp):
    target = public_tmp / ("n" * 250 + ".svg")  # 254 characters: its temporary name must not grow past 255
    write_text(target, "ok")
    assert target.read_text() == "ok"
    assert [p.name for p in public_tmp.iterdir()] == [target.name]


def test_a_path_longer_than_the_system_allows_is_the_files_failed_row_not_a_machine_fault(public_tmp, real_cad):
    folder = _deep_folder(public_tmp, 60, 72)  # 60 x 73 characters: past PATH_MAX (4,096)
    cfg = load_config(None, ['models.source="files"', f'models.files.root="{public_tmp}"',
                             f'out="{public_tmp / "out"}"'])
    unit = {"unit_id": "deep", "model_id": "deep", "source": "file", "source_path": f"{folder}/{DEEP_FILE}"}
    row = model_task(unit, ModelSettings.from_config(cfg, public_tmp / "out")).row
    assert row.status == "failed"
    assert "File name too long" in row.error and "\n" not in row.error


def test_a_deep_path_and_a_240_character_name_go_through_the_whole_job_and_a_rerun_has_nothing_to_do(
        public_tmp, real_cad):
    root = public_tmp / "cad"
    root.mkdir()
    deep = _deep_folder(root, 60, 8)  # 60 folders, the path within PATH_MAX: the file is read and drawn
    shutil.copy(real_cad / DEEP_FILE, deep / DEEP_FILE)
    shutil.copy(real_cad / LONG_FILE, root / LONG_NAME)
    out = public_tmp / "out"
    args = ("run", "--out", str(out), "--no-progress", "--set", 'models.source="files"',
            "--set", f'models.files.root="{root}"', *SMALL_JOB)
    first = spare_gen_cli(*args, cwd=public_tmp)
    assert first.returncode == 0, first.stderr
    assert "Traceback" not in first.stderr
    models = pq.read_table(out / "models.parquet").to_pylist()
    assert len(models) == 2 and all(r["status"] == "ok" for r in models), [r["error"] for r in models]
    assert all(len(r["model_id"]) <= MODEL_ID_CHARS for r in models)
    drawings = pq.read_table(out / "drawings.parquet").to_pylist()
    assert sorted(r["model_id"] for r in drawings) == sorted(r["model_id"] for r in models)
    assert all(r["status"] == "ok" for r in drawings)
    assert all(len(p.name.encode()) <= 255 for p in out.rglob("*"))
    second = spare_gen_cli(*args, cwd=public_tmp)
    assert second.returncode == 0, second.stderr
    assert "nothing to do" in second.stderr


def test_a_folder_too_deep_to_list_is_one_short_failed_row(public_tmp, real_cad):
    _deep_folder(public_tmp, 60, 72, real_cad / DEEP_FILE)
    items = discover(public_tmp, [".stp"], max_mb=50)
    assert len(items) == 1 and items[0].error and not items[0].sha256
    assert "File name too long" in items[0].error and "/.../" in items[0].error
    assert len(items[0].error) < 300 and len(items[0].model_id) <= MODEL_ID_CHARS
