"""The drawings stage draws only the views the asked tasks read (``TaskSpec.views``, ``tasks.drawn_views``).

A run asking for isometric_to_pose alone (the paper-scale I2P recipe) needs F, R, T and poses 1-6 (either pose set):
views 7 and 8 are not drawn, and every file it does write is the one a run of every task writes, byte for byte.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from spare_gen.canvas.views import FIXED_VIEWS
from spare_gen.config import load_config
from spare_gen.config.schema import TaskName
from spare_gen.jobs.regenerate import run
from spare_gen.stages.drawings.schema import DRAWINGS_FILE, VIEWS_FILE
from spare_gen.stages.drawings.settings import DrawSettings
from spare_gen.stages.questions.assembly.inputs import MissingViews
from spare_gen.stages.questions.tasks import TASK_SPECS, drawn_views
from spare_gen.store import shards
from spare_gen.validate import validate
from tests.conftest import REPO

MODELS = 14
DRAWN = ("models", "drawings")
WITH_QUESTIONS = ("models", "drawings", "questions")
I2P_ONLY = "{" + ", ".join(f"{t.value} = {6 if t is TaskName.ISOMETRIC_TO_POSE else 0}" for t in TaskName) + "}"
AND_P2I = "{" + ", ".join(f"{t.value} = {6 if t in (TaskName.ISOMETRIC_TO_POSE, TaskName.POSE_TO_ISOMETRIC) else 0}"
                          for t in TaskName) + "}"


def _config(out: Path, *overrides: str):
    return load_config(REPO / "configs" / "default.toml",
                       [f'out="{out}"', "runner.progress=false", "runner.dashboard=false",
                        f"models.csg.count={MODELS}", "pool.enabled=false", "questions.allow_fewer=true",
                        *overrides])


def _views(out: Path) -> dict[str, set[str]]:
    table = shards.read(out / VIEWS_FILE, ["model_id", "view"]).to_pylist()
    found: dict[str, set[str]] = {}
    for r in table:
        found.setdefault(r["model_id"], set()).add(r["view"])
    return found


def _drawing_files(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((out / "drawings").rglob("*")) if p.is_file()}


def _parts(out: Path) -> set[str]:
    """The views table's part names: named by their units' fingerprints, so the same names mean nothing was redrawn."""
    return {p.name for p in (out / VIEWS_FILE).iterdir()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The same 14 CSG models drawn for every task (the default counts: drawings only) and for isometric_to_pose
    alone (with its questions)."""
    root = tmp_path_factory.mktemp("drawn_views")
    every, i2p = root / "every", root / "i2p"
    run(_config(every), stages=DRAWN)
    run(_config(i2p, f"questions.counts={I2P_ONLY}"), stages=WITH_QUESTIONS)
    return {"every": every, "i2p": i2p}


def test_isometric_to_pose_declares_the_three_views_and_poses_1_to_6_of_either_pose_set():
    assert TASK_SPECS[TaskName.ISOMETRIC_TO_POSE].views == ("f", "r", "t", "1", "2", "3", "4", "5", "6")
    assert TASK_SPECS[TaskName.POSE_TO_ISOMETRIC].views == FIXED_VIEWS


# DrawSettings.fingerprint() before the drawings stage chose its views (the code of ce04dbd)
EVERY_VIEW_FINGERPRINTS = {"default": "0d77cd04dc2d3b7f", "spare3d_paper_scale_upper_poses": "753fab119681c8ef"}


def test_drawing_every_view_keeps_the_fingerprint_drawings_had_before_the_views_were_chosen(tmp_path):
    configs = {name: load_config(REPO / "configs" / f"{name}.toml") for name in EVERY_VIEW_FINGERPRINTS}
    assert {name: DrawSettings.from_config(c, tmp_path, drawn_views(c) if name == "default" else FIXED_VIEWS)
            .fingerprint() for name, c in configs.items()} == EVERY_VIEW_FINGERPRINTS
    i2p = configs["spare3d_paper_scale_upper_poses"]
    skipping = DrawSettings.from_config(i2p, tmp_path, drawn_views(i2p))
    assert skipping.views == tuple(FIXED_VIEWS[:9]) and skipping.fingerprint() not in EVERY_VIEW_FINGERPRINTS.values()
    with pytest.raises(ValueError, match="leave out F, R or T"):
        DrawSettings.from_config(i2p, tmp_path, ("1", "2"))


def test_the_default_config_draws_all_11_views_of_every_model(runs):
    assert drawn_views(load_config(REPO / "configs" / "default.toml")) == FIXED_VIEWS
    views = _views(runs["every"])
    assert len(views) == MODELS and all(v == set(FIXED_VIEWS) for v in views.values())


def test_a_run_asking_only_isometric_to_pose_draws_no_view_7_or_8_and_every_file_it_writes_is_the_full_runs(runs):
    every, i2p = runs["every"], runs["i2p"]
    views = _views(i2p)
    assert len(views) == MODELS and all(v == set(FIXED_VIEWS) - {"7", "8"} for v in views.values())
    files, full = _drawing_files(i2p), _drawing_files(every)
    assert files and not [f for f in files if Path(f).stem in ("7", "8")]
    assert {f: full.get(f) for f in files} == files  # same names, same sha256
    assert len(full) - len(files) == 2 * 2 * MODELS  # 7 and 8, SVG and PNG, of every model
    columns = ["model_id", "status", "scale", "center", "bbox", "usable", "front_png_sha256"]
    rows = [shards.read(out / DRAWINGS_FILE, columns).to_pylist() for out in (i2p, every)]
    assert rows[0] == rows[1]


def test_the_questions_stage_and_validate_accept_a_dataset_without_views_7_and_8(runs):
    i2p = runs["i2p"]
    assert sorted(p.name for p in (i2p / "questions" / "isometric_to_pose").glob("*.parquet"))
    assert validate(i2p) == []


def test_a_rerun_with_the_same_settings_or_the_other_pose_set_redraws_nothing(runs, tmp_path):
    out = tmp_path / "i2p"
    shutil.copytree(runs["i2p"], out, symlinks=True)
    parts, files = _parts(out), _drawing_files(out)
    run(_config(out, f"questions.counts={I2P_ONLY}"), stages=WITH_QUESTIONS)
    run(_config(out, f"questions.counts={I2P_ONLY}", 'questions.pose_choices="spare3d"'), stages=WITH_QUESTIONS)
    assert _parts(out) == parts and _drawing_files(out) == files
    assert validate(out) == []


def test_drawings_of_every_view_already_there_are_kept_by_a_run_that_needs_fewer(runs, tmp_path):
    out = tmp_path / "every"
    shutil.copytree(runs["every"], out, symlinks=True)
    parts, files = _parts(out), _drawing_files(out)
    run(_config(out, f"questions.counts={I2P_ONLY}"), stages=DRAWN)
    assert _parts(out) == parts and _drawing_files(out) == files


def test_asking_later_for_a_task_that_reads_views_7_and_8_draws_them(runs, tmp_path):
    out = tmp_path / "i2p"
    shutil.copytree(runs["i2p"], out, symlinks=True)
    before = _drawing_files(out)
    with pytest.raises(MissingViews, match=r"holds no drawing of view\(s\) 7, 8.*--stages drawings,questions"):
        run(_config(out, f"questions.counts={AND_P2I}"), stages=("questions",))
    run(_config(out, f"questions.counts={AND_P2I}"), stages=WITH_QUESTIONS)
    assert all(v == set(FIXED_VIEWS) for v in _views(out).values())
    after = _drawing_files(out)
    assert {f: after.get(f) for f in before} == before and after == _drawing_files(runs["every"])
    assert sorted(p.name for p in (out / "questions" / "pose_to_isometric").glob("*.parquet"))
    assert validate(out) == []
