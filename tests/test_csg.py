"""CSG generator: equal primitive shares, 90-degree rotations about X/Y/Z, exact rebuild from JSON."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from spare_gen import cad
from spare_gen.stages.models.csg import PARAM_RANGES, primitive_counts_for, primitive_volume, random_program
from spare_gen.config.schema import CsgConfig
from spare_gen.stages.models.settings import ModelSettings
from spare_gen.cad.props import volume
from spare_gen.stages.models.child import check_csg, make_csg_model, step_copy_differs, write_model_files
from spare_gen.rng import derive_rng


def test_primitive_counts_are_equal_shares():
    counts = primitive_counts_for(12000, [2, 3, 4])
    assert [counts.count(k) for k in (2, 3, 4)] == [4000, 4000, 4000]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_programs_follow_spare3d_rules(n):
    for i in range(50):
        prog = random_program(n, derive_rng(7, "csg", i, 0))
        assert len(prog["primitives"]) == n and len(prog["operations"]) == n - 1
        for p in prog["primitives"]:
            assert p["rotation"]["axis"] in ("x", "y", "z")
            assert p["rotation"]["degrees"] % 90 == 0 and 0 <= p["rotation"]["degrees"] < 360
            for name, (lo, hi) in PARAM_RANGES[type(next(iter(PARAM_RANGES)))(p["type"])].items():
                assert lo <= p["params"][name] <= hi
        assert set(prog["operations"]) <= {"union", "difference", "intersection"}


def test_same_seed_same_program_other_seed_other_program():
    a = random_program(3, derive_rng(1, "csg", 5, 0))
    assert a == random_program(3, derive_rng(1, "csg", 5, 0))
    assert a != random_program(3, derive_rng(2, "csg", 5, 0))


def test_rebuild_from_json_gives_same_volume(tmp_path):
    built = 0
    for i in range(12):
        prog = random_program(2 + i % 3, derive_rng(3, "csg", i, 0))
        shape = cad.build_csg(prog)
        reason, stats = check_csg(shape, prog, 0.05)
        if reason is not None:
            continue
        again = cad.build_csg(json.loads(json.dumps(prog)))
        assert math.isclose(cad.shape_stats(again)["volume"], stats["volume"], rel_tol=1e-9)
        cad.write_brep(shape, tmp_path / "m.brep")  # the exact copy later stages read
        assert math.isclose(cad.shape_stats(cad.read_shape(tmp_path / "m.brep"))["volume"], stats["volume"], rel_tol=1e-9)
        cad.write_step(shape, tmp_path / "m.step")  # the interchange copy for users
        assert cad.shape_stats(cad.read_shape(tmp_path / "m.step"))["n_faces"] == stats["n_faces"]
        built += 1
    assert built >= 4


def test_single_primitive_volume_matches_occt():
    prog = {"primitives": [{"type": "torus", "params": {"R": 0.4, "r": 0.1}, "rotation": {"axis": "x", "degrees": 90},
                            "translation": [0.1, 0, 0]}], "operations": []}
    occt = cad.shape_stats(cad.build_csg(prog))["volume"]
    assert math.isclose(occt, primitive_volume(prog["primitives"][0]), rel_tol=1e-6)


def test_degenerate_results_are_rejected_by_name():
    far = {"primitives": [
        {"type": "box", "params": {"dx": 0.5, "dy": 0.5, "dz": 0.5}, "rotation": {"axis": "z", "degrees": 0}, "translation": [0, 0, 0]},
        {"type": "sphere", "params": {"r": 0.3}, "rotation": {"axis": "z", "degrees": 0}, "translation": [3, 0, 0]},
    ], "operations": ["union"]}
    assert check_csg(cad.build_csg(far), far, 0.05)[0].value == "disconnected"
    apart = dict(far, operations=["intersection"])
    assert check_csg(cad.build_csg(apart), apart, 0.05)[0].value == "empty"
    sliver = {"primitives": [far["primitives"][0], dict(far["primitives"][1], translation=[0.5, 0, 0])],
              "operations": ["intersection"]}
    assert check_csg(cad.build_csg(sliver), sliver, 0.05)[0].value == "tiny_volume"


def test_rules_measure_cheapest_first_and_accepted_shapes_get_full_stats():
    far = {"primitives": [
        {"type": "box", "params": {"dx": 0.5, "dy": 0.5, "dz": 0.5}, "rotation": {"axis": "z", "degrees": 0}, "translation": [0, 0, 0]},
        {"type": "sphere", "params": {"r": 0.3}, "rotation": {"axis": "z", "degrees": 0}, "translation": [3, 0, 0]},
    ], "operations": ["union"]}
    reason, measured = check_csg(cad.build_csg(far), far, 0.05)
    assert reason.value == "disconnected" and set(measured) == {"n_solids", "volume"}  # no BRepCheck, no box
    near = dict(far, primitives=[far["primitives"][0], dict(far["primitives"][1], translation=[0.3, 0, 0])])
    shape = cad.build_csg(near)
    reason, stats = check_csg(shape, near, 0.05)
    assert reason is None and stats == cad.shape_stats(shape)  # the same row as measuring everything anew


def test_csg_model_files_hash_the_bytes_on_disk_and_report_cpu_by_phase(tmp_path):
    settings = ModelSettings(stage="models", seed=0, out_dir=str(tmp_path), timeout_s=60, csg=CsgConfig())
    row = make_csg_model({"unit_id": "csg_000007", "model_id": "csg_000007", "n_primitives": 4}, settings,
                         settings.unit_rng("csg_000007"))
    for kind in ("step", "brep"):
        data = (tmp_path / row[f"{kind}_path"]).read_bytes()
        assert row[f"{kind}_sha256"] == hashlib.sha256(data).hexdigest()
    again = cad.read_shape(tmp_path / row["step_path"])
    assert cad.shape_stats(again)["n_faces"] == row["n_faces"]
    assert {"build", "check", "step", "brep", "hash"} <= set(row["timing"]) and row["timing"]["build"] > 0
    assert ("rejected" in row["timing"]) == (row["attempts"] > 1)


# Two tori and a sphere (a model the generator drew): OCCT writes a STEP file that reads back as another solid
# (volume 0.353 written, 0.024 read), while the BREP copy, which the drawings come from, is the shape built.
STEP_CHANGES_IT = {"operations": ["union", "union"], "primitives": [
    {"params": {"R": 0.38, "r": 0.14}, "rotation": {"axis": "y", "degrees": 90}, "translation": [-0.04, 0.08, 0.25],
     "type": "torus"},
    {"params": {"r": 0.34}, "rotation": {"axis": "x", "degrees": 270}, "translation": [-0.15, 0.23, -0.24],
     "type": "sphere"},
    {"params": {"R": 0.31, "r": 0.13}, "rotation": {"axis": "z", "degrees": 270}, "translation": [0.25, 0.19, -0.17],
     "type": "torus"},
]}


def test_a_model_whose_step_copy_reads_back_as_another_solid_is_caught(tmp_path):
    shape = cad.build_csg(STEP_CHANGES_IT)
    reason, stats = check_csg(shape, STEP_CHANGES_IT, 0.05)
    assert reason is None  # a valid solid by every other rule
    files = write_model_files(shape, str(tmp_path), "torus_sphere")
    assert abs(volume(cad.read_shape(tmp_path / files["brep_path"])) - stats["volume"]) < 1e-9
    assert step_copy_differs(stats["volume"], tmp_path / files["step_path"])
    box = {"primitives": [{"type": "box", "params": {"dx": 1, "dy": 2, "dz": 3}, "translation": [0, 0, 0]}],
           "operations": []}
    plain = write_model_files(cad.build_csg(box), str(tmp_path), "box")
    assert not step_copy_differs(6.0, tmp_path / plain["step_path"])
