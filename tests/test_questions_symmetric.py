"""Symmetric file models (a cube, a cylinder) never become isometric-to-pose questions; allow_fewer keeps balance."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spare_gen.jobs.regenerate import run
from spare_gen import cad
from spare_gen.config import load_config
from spare_gen.stages.questions.validate import validate




def _box(dx, dy, dz, t=(0, 0, 0)):
    return {"type": "box", "params": {"dx": dx, "dy": dy, "dz": dz}, "translation": list(t)}


def _prim(kind, params, t=(0, 0, 0), axis="z", degrees=0):
    return {"type": kind, "params": params, "translation": list(t), "rotation": {"axis": axis, "degrees": degrees}}


SYMMETRIC = {
    "cube": {"primitives": [_box(1, 1, 1)], "operations": []},
    "cylinder": {"primitives": [_prim("cylinder", {"r": 0.4, "h": 1.0})], "operations": []},
}
ASYMMETRIC = {  # no rotation or mirror of the pose cube maps one onto itself
    "l_block": {"primitives": [_box(1.0, 0.6, 0.4), _box(0.3, 0.3, 0.8, (0.3, 0.1, 0.3))], "operations": ["union"]},
    "notched": {"primitives": [_box(1.0, 0.8, 0.6), _prim("sphere", {"r": 0.35}, (0.5, -0.4, 0.3))],
                "operations": ["difference"]},
    "cone_on_box": {"primitives": [_box(0.9, 0.5, 0.3), _prim("cone", {"r1": 0.25, "r2": 0.05, "h": 0.6},
                                                              (0.2, 0.1, 0.35), "x", 90)],
                    "operations": ["union"]},
    "drilled": {"primitives": [_box(1.0, 0.7, 0.5), _prim("cylinder", {"r": 0.12, "h": 1.0}, (0.25, 0.15, 0.0))],
                "operations": ["difference"]},
}


@pytest.fixture(scope="module")
def symmetric_dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("symmetric")
    cad_dir = root / "cad"
    for name, program in {**SYMMETRIC, **ASYMMETRIC}.items():
        cad.write_step(cad.build_csg(program), cad_dir / f"{name}.step", name=name)
    out = root / "out"
    counts = "{isometric_to_pose = 6, three_view_to_isometric = 0, pose_to_isometric = 0, " \
             "isometric_view_generation = 0, point_cloud_generation = 0}"
    cfg = load_config(None, [f'out="{out}"', "runner.progress=false", "runner.dashboard=false", "runner.workers=1",
                             'models.source="files"', f'models.files.root="{cad_dir}"', "pool.enabled=false",
                             f"questions.counts={counts}", "questions.allow_fewer=true"])
    run(cfg, stages=("models", "drawings", "questions"))
    return out


def test_symmetric_models_are_rejected_from_isometric_to_pose(symmetric_dataset):
    out = symmetric_dataset
    used = [r["model_id"] for s in ("train", "val", "test")
            if (out / f"questions/isometric_to_pose/{s}.parquet").exists()
            for r in pq.read_table(out / f"questions/isometric_to_pose/{s}.parquet").to_pylist()]
    assert not set(used) & set(SYMMETRIC)
    assert set(used) <= set(ASYMMETRIC) and len(used) == 4  # every asymmetric model makes a question
    summary = json.loads((out / "questions/summary.json").read_text())
    assert summary["rejected_models"]["isometric_to_pose"] == {"poses_coincide": 2}
    assert summary["requested"]["isometric_to_pose"] == 6 and sum(summary["produced"]["isometric_to_pose"].values()) == 4
    assert "poses_coincide" in (out / "README.md").read_text()


def test_allow_fewer_dataset_still_validates(symmetric_dataset):
    assert validate(symmetric_dataset) == []
    rows = pq.read_table(symmetric_dataset / "questions/isometric_to_pose/train.parquet").to_pylist()
    counts = Counter(r["answer"] for r in rows)
    assert max(counts.get(i, 0) for i in range(4)) - min(counts.get(i, 0) for i in range(4)) <= 1
    assert all(r["n_primitives"] is None for r in rows)  # file models: one stratum
