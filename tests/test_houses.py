"""Procedural houses: every roof and footprint a valid B-rep, their wireframes' roof kinds, a house pool end to end."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from spare_gen import cad
from spare_gen.store import shards
from spare_gen.cad.props import is_valid, solids_and_volume
from spare_gen.cli import main
from spare_gen.config import ConfigError, load_config
from spare_gen.config.schema import Footprint, HousesConfig, PredictionUnits, RoofType
from spare_gen.metrics.catalog import corner_prf
from spare_gen.stages.models.driver import model_units
from spare_gen.stages.models.houses import convex_parts, random_house
from spare_gen.rng import derive_rng
from spare_gen.stages.pool.child import brep_wireframe, merge_close_points, with_house_kinds
from spare_gen.wireframe import CORNER, CURVE, EAVE, RIDGE, Wireframe
from spare_gen.rating.predictions import read_prediction
from tests.conftest import REPO

PLAIN = HousesConfig(dormer_probability=0.0, chimney_probability=0.0)
FULL = HousesConfig(dormer_probability=1.0, chimney_probability=1.0)
# A plain rectangular house: (vertices, edges, {kind: count}). The gable ends are pentagons (no eave line
# across them), a hip roof adds four hip edges, a shed roof's high edge is its ridge.
PLAIN_RECT = {
    RoofType.GABLE: (10, 15, {CORNER: 4, RIDGE: 2, EAVE: 4}),
    RoofType.HIP: (10, 17, {CORNER: 4, RIDGE: 2, EAVE: 4}),
    RoofType.FLAT: (8, 12, {CORNER: 4, EAVE: 4}),
    RoofType.SHED: (8, 12, {CORNER: 4, RIDGE: 2, EAVE: 2}),
}
# Its roof alone (pool.house_wireframe = "roof"): no ground outline, no walls; a gable roof is open at its ends.
PLAIN_ROOF = {
    RoofType.GABLE: (6, 7, {RIDGE: 2, EAVE: 4}),
    RoofType.HIP: (6, 9, {RIDGE: 2, EAVE: 4}),
    RoofType.FLAT: (4, 4, {EAVE: 4}),
    RoofType.SHED: (4, 4, {RIDGE: 2, EAVE: 2}),
}


def house_wireframe(house: dict, roof_only: bool = False):
    """The house's solid and its extracted wireframe (model units) with roof kinds."""
    shape = cad.build_house(convex_parts(house))
    extracted = with_house_kinds(brep_wireframe(shape), house, roof_only)
    return shape, extracted.to_model_units(), extracted.edges, extracted.kinds


@pytest.mark.parametrize("footprint, roof", list(itertools.product(Footprint, RoofType)))
def test_every_footprint_and_roof_builds_one_valid_solid_that_rebuilds_from_its_json(footprint, roof):
    for seed in range(3):
        house = random_house(footprint, roof, derive_rng(seed, "test-houses", footprint.value, roof.value), FULL)
        shape = cad.build_house(convex_parts(house))
        n_solids, volume = solids_and_volume(shape)
        assert is_valid(shape) and n_solids == 1 and volume > 0, (footprint, roof, seed)
        lo, hi = np.asarray(cad.shape_stats(shape)["bbox_min"]), np.asarray(cad.shape_stats(shape)["bbox_max"])
        assert lo[2] == pytest.approx(0.0, abs=1e-7)  # standing on the ground
        again = json.loads(json.dumps(house, sort_keys=True))
        assert all(np.array_equal(a, b) for a, b in zip(convex_parts(again), convex_parts(house), strict=True))
        rebuilt = cad.build_house(convex_parts(again))
        assert solids_and_volume(rebuilt)[1] == pytest.approx(volume, rel=1e-9)
        assert np.allclose(cad.shape_stats(rebuilt)["bbox_max"], hi)


@pytest.mark.parametrize("roof", list(RoofType))
def test_a_plain_house_wireframe_has_the_vertices_edges_and_kinds_of_its_roof(roof):
    house = random_house(Footprint.RECT, roof, derive_rng(1, "test-houses", roof.value), PLAIN)
    _, vertices, edges, kinds = house_wireframe(house)
    n_vertices, n_edges, counts = PLAIN_RECT[roof]
    assert (len(vertices), len(edges)) == (n_vertices, n_edges)
    assert Counter(kinds.tolist()) == counts
    block = house["blocks"][0]
    z = vertices[:, 2]
    assert np.allclose(z[kinds == CORNER], 0.0, atol=1e-7)  # the ground corners
    # eaves at the top of the walls, ridges (a shed roof: its high edge) at the top of the roof
    assert np.allclose(z[kinds == EAVE], block["wall"])
    assert np.allclose(z[kinds == RIDGE], block["wall"] + block["rise"])
    _, roof_vertices, roof_edges, roof_kinds = house_wireframe(house, roof_only=True)
    n_vertices, n_edges, counts = PLAIN_ROOF[roof]
    assert (len(roof_vertices), len(roof_edges)) == (n_vertices, n_edges)
    assert Counter(roof_kinds.tolist()) == counts
    assert np.allclose(np.sort(roof_vertices, axis=0), np.sort(vertices[kinds != CORNER], axis=0))


def test_dormers_add_ridge_and_eave_vertices_and_a_chimney_only_corners():
    house = random_house(Footprint.RECT, RoofType.GABLE, derive_rng(1, "test-houses", "gable"), PLAIN)
    plain = Counter(house_wireframe(house)[3].tolist())
    with_dormer = random_house(Footprint.RECT, RoofType.GABLE, derive_rng(3, "test-houses", "gable"), FULL)
    assert len(with_dormer["dormers"]) >= 1 and len(with_dormer["chimneys"]) == 1
    _, vertices, _, kinds = house_wireframe(with_dormer)
    counts = Counter(kinds.tolist())
    n = len(with_dormer["dormers"])
    assert counts[RIDGE] == plain[RIDGE] + 2 * n and counts[EAVE] == plain[EAVE] + 2 * n
    chimney = with_dormer["chimneys"][0]
    top = np.isclose(vertices[:, 2], chimney["z"][1])
    assert top.sum() == 4 and (kinds[top] == CORNER).all()  # its top is above the ridge, yet no roof vertex


def test_houses_are_seeded_by_model_and_cover_every_footprint_and_roof(tmp_path):
    config = load_config(REPO / "configs" / "houses_pool.toml", [f'out="{tmp_path}"'])
    units = model_units(config)
    assert {(u["footprint"], u["roof"]) for u in units} == {(f.value, r.value) for f in Footprint for r in RoofType}
    unit = units[5]
    rng = config.seed, "models", unit["unit_id"]
    first = random_house(Footprint(unit["footprint"]), RoofType(unit["roof"]), derive_rng(*rng), config.models.houses)
    again = random_house(Footprint(unit["footprint"]), RoofType(unit["roof"]), derive_rng(*rng), config.models.houses)
    other = random_house(Footprint(unit["footprint"]), RoofType(unit["roof"]), derive_rng(1, *rng[1:]),
                         config.models.houses)
    assert first == again and first != other


def test_an_unknown_roof_type_is_one_line_naming_the_key_and_the_choices():
    with pytest.raises(ConfigError) as info:
        load_config(REPO / "configs" / "houses_pool.toml", ['models.houses.roofs=["gable", "dome"]'])
    message = str(info.value)
    assert "\n" not in message and "models.houses.roofs.1" in message and "'dome'" in message
    assert "'gable', 'hip', 'flat' or 'shed'" in message


def test_a_house_pool_runs_through_pool_metric_report_and_rank(tmp_path):
    out = tmp_path / "houses"
    assert main(["pool", "-c", str(REPO / "configs" / "houses_pool.toml"), "--out", str(out), "--workers", "1",
                 "--no-progress", "--set", "runner.dashboard=false", "--set", "models.houses.count=4",
                 "--set", 'models.houses.footprints=["l"]', "--set", "pool.models=2",
                 "--set", "pool.image_size=128", "--set", "pool.house_wireframe=roof"]) == 0
    models = shards.read(out / "models.parquet").to_pylist()
    assert [m["model_id"] for m in models] == [f"house_{i:06d}" for i in range(4)]
    assert all(m["status"] == "ok" and m["valid"] and m["source"] == "houses" and m["csg"] is None for m in models)
    assert [json.loads(m["house"])["roof"] for m in models] == ["gable", "hip", "flat", "shed"]
    wireframes = pq.read_table(out / "wireframes.parquet").to_pylist()
    assert [w["status"] for w in wireframes] == ["ok", "ok"]
    for w, m in zip(wireframes, models):  # L-shaped gable and hip roofs (no walls): ridges and eaves, all corners
        assert {RIDGE, EAVE} <= set(w["vertex_kinds"]) and w["n_corners"] == w["n_vertices"] < m["n_vertices"]
    corruptions = pq.read_table(out / "corruptions.parquet", columns=["model_id", "status"]).to_pylist()
    assert {c["model_id"] for c in corruptions if c["status"] == "ok"} == {"house_000000", "house_000001"}

    assert main(["metric-report", str(out), "--max-models", "2", "--models", "0", "--workers", "1"]) == 0
    table = pq.read_table(out / "reports" / "metric_properties.parquet").to_pandas()
    identity = table[table["test"] == "Identity of indiscernibles"]
    assert len(identity) and identity["passed"].all()

    answers = tmp_path / "answers.csv"
    assert main(["simulate-raters", str(out), "--answers", str(answers), "--truth", "edge_f1"]) == 0
    assert main(["rank", str(out), str(answers)]) == 0
    agreement = pq.read_table(out / "reports" / "metric_agreement.parquet").to_pandas()
    assert len(agreement) and (out / "reports" / "ranking.md").stat().st_size > 0


def test_roof_kinds_count_as_corners_in_metrics_merging_and_prediction_files(tmp_path):
    # a CURVE point merged into a ridge vertex leaves a ridge vertex (not a curve point)
    points, kinds, edges = merge_close_points(
        np.array([[0.0, 0, 0], [0, 0, 0], [1, 0, 0]]), np.array([CURVE, RIDGE, EAVE]), np.array([[0, 2], [1, 2]]), 1e-6)
    assert kinds.tolist() == [RIDGE, EAVE] and edges.tolist() == [[0, 1]]
    # corner-only metrics compare ridge and eave vertices and ignore only CURVE points
    gt = Wireframe([[0, 0, 0], [1, 0, 0], [0.5, 0.5, 0]], [[0, 2], [2, 1]], [RIDGE, EAVE, CURVE])
    bent = Wireframe([[0, 0, 0], [1, 0, 0], [0.5, 0.9, 0]], gt.edges, gt.kinds)
    moved_ridge = Wireframe([[0, 0.5, 0], [1, 0, 0], [0.5, 0.5, 0]], gt.edges, gt.kinds)
    assert corner_prf(bent, gt, kinds="corners")["f1"] == 1.0 and corner_prf(bent, gt, kinds="all")["f1"] < 1.0
    assert corner_prf(moved_ridge, gt, kinds="corners")["f1"] == 0.5
    # a prediction file may carry the house kinds
    path, body = tmp_path / "house.json", {"vertices": gt.vertices.tolist(), "edges": gt.edges.tolist()}
    path.write_text(json.dumps({**body, "vertex_kinds": [2, 3, 1]}))
    assert read_prediction(path, PredictionUnits.NORMALISED, [0, 0, 0], 1.0).kinds.tolist() == [RIDGE, EAVE, CURVE]
    path.write_text(json.dumps({**body, "vertex_kinds": [2, 3, 7]}))
    with pytest.raises(ValueError, match="vertex_kinds must be one of"):
        read_prediction(path, PredictionUnits.NORMALISED, [0, 0, 0], 1.0)
