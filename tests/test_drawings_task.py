"""The drawing task: exact HLR in a killable child, mesh fallback, failures recorded; quality flags; tables."""

from __future__ import annotations

import json

import pytest

from drawings_shapes import BOX, EMPTY, L_BLOCK, NEEDLE, render_config, write_model
from spare_gen.stages.drawings.flags import assign_duplicate_flags
from spare_gen.stages.drawings.schema import DRAWINGS_SCHEMA, VIEWS_SCHEMA, rows_to_table
from spare_gen.stages.drawings.settings import DrawSettings
from spare_gen.stages.drawings.child import draw_model
from spare_gen.stages.drawings.settings import DrawResult
from spare_gen.stages.drawings.worker import draw_task as _draw_task
from spare_gen.config.schema import DebugConfig
from spare_gen.runner import testhooks


def ctx_for(out, **render):
    """The stage's settings and test hooks (``debug``), as the stage runner passes them."""
    settings = DrawSettings(stage="drawings", seed=0, out_dir=str(out), timeout_s=30, render=render_config(**render))
    return {"settings": settings, "debug": DebugConfig()}


def draw_task(unit: dict, ctx: dict) -> DrawResult:
    """As the stage runner calls it: inside the unit's test-hook context."""
    with testhooks.unit_context("drawings", unit["unit_id"], 0, ctx.get("debug")):
        return _draw_task(unit, ctx["settings"])


def unit(model_id, path):
    return {"unit_id": model_id, "model_id": model_id, "shape_path": path}


def test_exact_hang_falls_back_to_mesh_hlr(tmp_path):
    path = write_model(BOX, tmp_path, "box")
    ctx = ctx_for(tmp_path, exact_timeout_s=1.0)
    ctx["debug"] = DebugConfig(hang=["drawings-exact:box"])  # hangs in exact HLR only
    result = draw_task(unit("box", path), ctx)
    model = result.row
    assert result.status == model.status == "ok"
    assert model.hlr_method == "poly" and "exact HLR timeout" in model.fallback_reason
    assert result.timings.child_wall_s >= 1.0  # the exact attempt's budget, then the mesh HLR
    assert [v["hlr_method"] for v in result.views] == ["poly"] * 11
    front = next(v for v in result.views if v["view"] == "f")
    assert front["n_visible"] >= 1 and front["n_hidden"] == 0  # the box outline, from the mesh algorithm
    assert (tmp_path / front["png"]).exists()
    json.dumps(result.record())  # plain JSON for the unit file


def test_crash_in_every_method_is_recorded_and_the_task_returns(tmp_path):
    path = write_model(BOX, tmp_path, "box")
    ctx = ctx_for(tmp_path, random_views=2)
    ctx["debug"] = DebugConfig(crash=["drawings:box"])
    result = draw_task(unit("box", path), ctx)
    assert result.status == "crashed" and result.row.usable is False
    assert "SIGABRT" in result.row.error and "exact HLR crashed" in result.row.fallback_reason
    assert [v["view"] for v in result.views][-2:] == ["rand_000", "rand_001"]
    assert len(result.views) == 13 and all(v["status"] == "crashed" for v in result.views)


def test_forced_methods(tmp_path):
    path = write_model(L_BLOCK, tmp_path, "l")
    poly = draw_task(unit("l", path), ctx_for(tmp_path, hlr="poly"))
    assert poly.row.hlr_method == "poly" and poly.row.fallback_reason == ""
    unreadable = draw_task(unit("x", str(tmp_path / "missing.brep")), ctx_for(tmp_path, hlr="exact"))
    assert unreadable.status == "failed" and "does not exist" in unreadable.row.error


def test_skipped_unit_is_not_drawn(tmp_path):
    result = draw_task({**unit("m", ""), "skip_reason": "model stage failed"}, ctx_for(tmp_path))
    assert result.status == "skipped" and len(result.views) == 11
    assert not (tmp_path / "drawings").exists()


def _draw(tmp_path, prog, name):
    return draw_model(name, write_model(prog, tmp_path, name), str(tmp_path), render_config(), None, "exact")


def test_blank_and_tiny_flags(tmp_path):
    empty = _draw(tmp_path, EMPTY, "empty")["model"]
    assert empty["blank"] and len(empty["blank_views"]) == 11 and not empty["usable"]
    needle = _draw(tmp_path, NEEDLE, "needle")  # a 10-long needle along Y: a dot seen from the front
    model = needle["model"]
    assert model["tiny"] and model["tiny_views"] == ["f"] and not model["blank"] and not model["usable"]
    extents = {v["view"]: v["extent"] for v in needle["views"]}
    assert extents["f"] == pytest.approx(0.02 * model["scale"], abs=0.02) and extents["t"] > 100
    box = _draw(tmp_path, BOX, "box")["model"]
    assert not (box["blank"] or box["tiny"]) and box["usable"]


def test_duplicates_flagged_in_model_id_order(tmp_path):
    rows = [_draw(tmp_path, BOX, name)["model"] for name in ("b", "a", "c")]
    rows.append(_draw(tmp_path, L_BLOCK, "d")["model"])
    rows.append({"model_id": "0", "status": "failed", "front_png_sha256": None, "usable": False})
    out = {r["model_id"]: r for r in assign_duplicate_flags(rows)}
    assert [r["model_id"] for r in assign_duplicate_flags(rows)] == ["b", "a", "c", "d", "0"]  # order kept
    assert (out["a"]["duplicate"], out["a"]["duplicate_of"], out["a"]["usable"]) == (False, None, True)
    assert (out["b"]["duplicate"], out["b"]["duplicate_of"], out["b"]["usable"]) == (True, "a", False)
    assert out["c"]["duplicate_of"] == "a" and not out["d"]["duplicate"] and not out["0"]["duplicate"]


def test_assembled_tables_match_the_schemas(tmp_path):
    ok = draw_task(unit("l", write_model(L_BLOCK, tmp_path, "l")), ctx_for(tmp_path, random_views=1))
    skipped = draw_task({**unit("s", ""), "skip_reason": "no shape"}, ctx_for(tmp_path, random_views=1))
    results = [ok, skipped]
    drawings = rows_to_table(assign_duplicate_flags([r.row.as_dict() for r in results]), DRAWINGS_SCHEMA)
    views = rows_to_table([v for r in results for v in r.views], VIEWS_SCHEMA)
    assert drawings.num_rows == 2 and views.num_rows == 24
    rows = views.to_pylist()
    front = next(r for r in rows if r["model_id"] == "l" and r["view"] == "f")
    assert front["png"] == "drawings/l/f.png" and front["svg"] == "drawings/l/f.svg"
    assert front["camera_rotation"] is None and len(front["bbox2d"]) == 4
    assert isinstance(front["visible"][0][0][0], float) and len(front["visible"][0][0]) == 2
    rand = [r for r in rows if r["model_id"] == "l" and r["view"] == "rand_000"]
    assert len(rand[0]["camera_rotation"]) == 3 and len(rand[0]["camera_position"]) == 3
    assert drawings.column("usable").to_pylist() == [True, False]
