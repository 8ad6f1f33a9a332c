"""Quality gate for real CAD: an invalid B-rep or several disjoint solids is flagged, kept, and makes no question."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spare_gen.jobs.regenerate import run
from spare_gen import cad
from spare_gen.config import load_config
from spare_gen.stages.models.quality import Quality, assess
from spare_gen.stages.questions.tasks import SPLITS

from tests.conftest import REAL_CAD
from test_questions_symmetric import ASYMMETRIC


FLAGGED = {"bug32314_corrupted": Quality.INVALID_BREP, "red_cube_blue_cylinder": Quality.DISJOINT_SOLIDS}
TASKS = ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric", "isometric_view_generation",
         "point_cloud_generation")


def _config(cad_dir: Path, out: Path, *extra: str):
    counts = "{point_cloud_generation = 6, isometric_view_generation = 0, three_view_to_isometric = 0, " \
             "isometric_to_pose = 0, pose_to_isometric = 0}"
    return load_config(None, [f'out="{out}"', "runner.progress=false", "runner.dashboard=false", "runner.workers=1",
                              'models.source="files"', f'models.files.root="{cad_dir}"', "pool.enabled=false",
                              f"questions.counts={counts}", "questions.allow_fewer=true", *extra])


def _used_models(out: Path) -> set[str]:
    used = set()
    for task in TASKS:
        for split in SPLITS:
            path = out / "questions" / task / f"{split}.parquet"
            if path.is_file():
                used |= set(pq.read_table(path, columns=["model_id"]).column("model_id").to_pylist())
    return used


@pytest.fixture(scope="module")
def gated(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("gate")
    cad_dir = root / "cad"
    cad_dir.mkdir()
    for name in FLAGGED:
        src = next(REAL_CAD.glob(f"{name}.*"))
        shutil.copyfile(src, cad_dir / src.name)
    for name, program in ASYMMETRIC.items():
        cad.write_step(cad.build_csg(program), cad_dir / f"{name}.step", name=name)
    out = root / "out"
    run(_config(cad_dir, out), stages=("models", "drawings", "questions"))
    return cad_dir, out


def _by_file(out: Path) -> dict[str, dict]:
    rows = pq.read_table(out / "models.parquet").to_pylist()
    return {Path(r["source_path"]).stem: r for r in rows}


def test_assess_names_every_failure():
    assert assess(True, 1, 1) == ("ok", "")
    assert assess(False, 11, 3) == ("invalid_brep", "the B-rep fails BRepCheck; 11 solids in 3 disjoint groups")
    assert assess(True, 2, 2) == ("disjoint_solids", "2 solids in 2 disjoint groups")
    assert assess(True, 2, 1)[0] == "ok"  # touching solids are one object


def test_flagged_models_are_kept_with_the_reason_and_make_no_question(gated):
    _, out = gated
    models = _by_file(out)
    for name, quality in FLAGGED.items():
        row = models[name]
        assert row["status"] == "ok" and row["quality"] == quality.value, row
        assert row["quality_reason"]
    assert "BRepCheck" in models["bug32314_corrupted"]["quality_reason"]
    assert "disjoint" in models["red_cube_blue_cylinder"]["quality_reason"]
    for name in ASYMMETRIC:
        assert models[name]["quality"] == "ok" and models[name]["quality_reason"] == ""
    used = _used_models(out)
    assert used and not used & {models[n]["model_id"] for n in FLAGGED}
    assert {models[n]["model_id"] for n in ASYMMETRIC} == used
    summary = json.loads((out / "questions" / "summary.json").read_text())
    drawn_flagged = sum(1 for n in FLAGGED if (out / "drawings" / models[n]["model_id"]).is_dir())
    assert summary["filtered_models"].get("flagged_cad") == drawn_flagged >= 1
    card = (out / "README.md").read_text()
    assert "## CAD quality gate" in card and "| `disjoint_solids` | 1 |" in card and "| `invalid_brep` | 1 |" in card
    stages = json.loads((out / "dataset.json").read_text())["stages"]
    assert "quality gate flagged 2" in stages["models"]


def test_allow_flagged_cad_lets_them_in(gated, tmp_path):
    cad_dir, out = gated
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    run(_config(cad_dir, copy, "questions.allow_flagged_cad=true"), stages=("questions",))
    models = _by_file(copy)
    assert _used_models(copy) & {models[n]["model_id"] for n in FLAGGED}
