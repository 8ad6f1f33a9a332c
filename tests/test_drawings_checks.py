"""Checks that see what a reader sees: a drawn line must lie on the model's projected edges or silhouettes, a model
whose faces carry no edges is repaired or failed, and models.parquet never records a box or volume the shape
contradicts. Each class is built with OCCT here; the real files in shared/cad pass the checks in every ok view."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from OCP.BRep import BRep_Builder, BRep_Tool
from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeEdge, BRepBuilderAPI_MakeWire
from OCP.BRepLib import BRepLib
from OCP.BRepOffsetAPI import BRepOffsetAPI_MakePipeShell
from OCP.BRepPrimAPI import BRepPrimAPI_MakeBox, BRepPrimAPI_MakeSphere
from OCP.BRepTools import BRepTools
from OCP.Geom import Geom_CylindricalSurface, Geom_RectangularTrimmedSurface
from OCP.Geom2d import Geom2d_Line
from OCP.gp import gp_Ax2, gp_Ax3, gp_Circ, gp_Dir, gp_Dir2d, gp_Pnt, gp_Pnt2d
from OCP.TopAbs import TopAbs_FACE
from OCP.TopoDS import TopoDS_Compound, TopoDS_Face

from scipy.spatial import cKDTree

from drawings_shapes import HOLED_BOX, L_BLOCK, render_config, write_model
from spare_gen import cad
from spare_gen.cad.compat import indexed_subshapes, to_face
from spare_gen.cad.hlr import HlrMethod, HlrModel, ViewLines
from spare_gen.config import load_config
from spare_gen.config.schema import DebugConfig
from spare_gen.stages.drawings.child import NO_EDGES, draw_model, estimated_scale, model_poses, projected_box, view_problem
from spare_gen.canvas.poses import Framing, pose
from spare_gen.stages.drawings.preset import drawing_rule
from spare_gen.stages.drawings.settings import DrawSettings
from spare_gen.stages.drawings.stray import STRAY_PX, Outline, densify
from spare_gen.stages.drawings.worker import draw_task
from spare_gen.stages.models.child import shape_contradiction
from spare_gen.stages.models.settings import ModelSettings
from spare_gen.stages.models.worker import model_task
from spare_gen.runner import testhooks

REAL_FILES = ["ANC101.stp", "bug3883_xr2-ct-214_l-bracket.stp", "io1-ug-214.stp", "red_cube_blue_cylinder.step",
              "nist_ctc_01.brep", "sheet_metal_54.brep", "bearing.iges", "M6-1x12-countersunk-screw.step",
              "0049_control_arm.step", "bm2_ec_lever-A.stp", "bug32314_corrupted.stp"]


def _outline(path: str) -> tuple[HlrModel, Outline, float]:
    render = render_config()
    rule = drawing_rule(render)
    hlr = HlrModel(cad.read_shape(path), HlrMethod.EXACT, render.deflection, smooth_edges=rule.smooth_edges)
    scale = estimated_scale(hlr, render.size, render.margin, rule)
    return hlr, Outline.of(hlr, scale), scale


def test_densified_polylines_keep_every_vertex_and_no_gap_wider_than_the_spacing():
    line = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 3.0]])
    points = densify([line], 0.5)
    assert {tuple(p) for p in line} <= {tuple(p) for p in points}
    assert np.linalg.norm(np.diff(points[:-1], axis=0), axis=1).max() <= 0.5 + 1e-12


def test_a_stray_segment_planted_in_an_exact_hlr_result_is_caught_with_its_distance(tmp_path):
    hlr, outline, scale = _outline(write_model(L_BLOCK, tmp_path, "l_block"))
    front = pose("f")  # the L-block's front: x 0..4, z 0..3, the upper right quarter (x > 2, z > 1.5) cut away
    lines = hlr.project(front.direction, front.x_direction)
    box = projected_box(hlr.bbox, front)
    assert outline.stray_px(lines, front) < 1.0
    assert view_problem(lines, box, None, scale, outline, front) == ""
    # a straight line through the cut-away quarter, matching no edge: its end (4, 2.5) lies 1 from the nearest edge
    stray = ViewLines(lines.visible + [np.array([[2.0, 2.5], [4.0, 2.5]])], lines.hidden, lines.method)
    assert outline.stray_px(stray, front) == pytest.approx(1.0 * scale, abs=1.0)
    assert view_problem(stray, box, None, scale, outline, front).startswith(
        f"a line strays {outline.stray_px(stray, front):.1f} px from every projected edge and silhouette")


def test_a_plainly_right_view_skips_the_point_search_and_a_stray_line_is_still_measured(tmp_path):
    hlr, outline, scale = _outline(write_model(L_BLOCK, tmp_path, "l_block"))
    front = pose("f")
    lines = hlr.project(front.direction, front.x_direction)
    assert 0.0 < outline.stray_px(lines, front) and outline.stray_beyond_px(lines, front) == 0.0  # the grid said so
    stray = ViewLines(lines.visible + [np.array([[2.0, 2.5], [4.0, 2.5]])], lines.hidden, lines.method)
    assert outline.stray_beyond_px(stray, front) == outline.stray_px(stray, front) > STRAY_PX


def test_lines_near_the_stray_threshold_are_judged_as_the_exact_distance_judges_them(tmp_path):
    # a segment under the L-block's bottom edge (z = 0, x 0..4), at 0.5-3.5 px from it: the grid may only pass a view
    # whose exact distance is within STRAY_PX, and every view beyond it is measured exactly
    hlr, outline, scale = _outline(write_model(L_BLOCK, tmp_path, "l_block"))
    front = pose("f")
    lines = hlr.project(front.direction, front.x_direction)
    box = projected_box(hlr.bbox, front)
    verdicts = set()
    for offset_px in np.random.default_rng(0).uniform(0.5, 3.5, 40):
        planted = np.array([[1.5, -offset_px / scale], [2.5, -offset_px / scale]])
        view = ViewLines(lines.visible + [planted], lines.hidden, lines.method)
        exact, judged = outline.stray_px(view, front), outline.stray_beyond_px(view, front)
        assert exact == pytest.approx(offset_px, abs=0.01)
        assert judged == exact or (judged == 0.0 and exact <= STRAY_PX), offset_px
        assert (view_problem(view, box, None, scale, outline, front) != "") == (exact > STRAY_PX), offset_px
        verdicts.add((exact > STRAY_PX, judged == 0.0))
    assert {(True, False), (False, True)} <= verdicts  # both sides of the threshold met, the grid passing some


def test_silhouettes_of_curved_faces_are_no_stray_lines(tmp_path):
    sphere = tmp_path / "sphere.brep"
    cad.write_brep(BRepPrimAPI_MakeSphere(1.5).Shape(), sphere)
    for path in (str(sphere), write_model(HOLED_BOX, tmp_path, "holed_box")):
        hlr, outline, _ = _outline(path)
        for p in model_poses(0, None):
            assert outline.stray_px(hlr.project(p.direction, p.x_direction), p) < STRAY_PX / 2, (path, p.name)


def test_a_view_with_a_stray_line_is_redrawn_by_the_mesh_algorithm(tmp_path):
    testhooks.fire({"names": ["stray_hlr_line"]})  # as the stage child does for a unit named in [debug]
    try:
        model = draw_model("l_block", write_model(L_BLOCK, tmp_path, "l_block"), str(tmp_path), render_config(), None,
                           "exact")["model"]
    finally:
        testhooks.fire(None)
    assert (model["status"], model["hlr_method"]) == ("ok", "poly"), model["error"]
    assert model["fallback_reason"].startswith("exact HLR gave no plausible drawing for view(s) f, r, t")


# the screw's threads take exact HLR about a minute a view (the stage's budget sends them to the mesh algorithm)
MESH_DRAWN = {"M6-1x12-countersunk-screw.step"}


@pytest.mark.parametrize("name", REAL_FILES)
def test_no_ok_view_of_a_real_file_has_a_line_off_the_models_edges_and_silhouettes(real_cad, tmp_path, name):
    """What a reader sees: the written rows' canvas lines against the model's projected edges and silhouettes."""
    method = "poly" if name in MESH_DRAWN else "exact"
    result = draw_model("m", str(real_cad / name), str(tmp_path), render_config(), None, method)
    model = result["model"]
    framing = Framing(200, model["scale"], tuple(model["center"]))
    _, outline, _ = _outline(str(real_cad / name))
    ok = [row for row in result["views"] if row["status"] == "ok"]
    assert len(ok) == 11, [(row["view"], row.get("error")) for row in result["views"] if row["status"] != "ok"]
    for row in ok:
        p = pose(row["view"])
        reference = cKDTree(framing.to_canvas(p, outline.tree(p).data))
        drawn = densify([np.asarray(line, dtype=float).reshape(-1, 2) for line in row["visible"] + row["hidden"]], 1.0)
        assert reference.query(drawn)[0].max() <= STRAY_PX, (name, row["view"], row["hlr_method"])


# a torus crossed by a cone and cut by a second torus: BRepMesh leaves a third of the big torus face bare (its
# triangles cover 63 % of it), so the mesh's folds miss half of the hole's rim, which exact HLR draws right
HALF_MESHED_TORUS = {"operations": ["union", "difference"], "primitives": [
    {"type": "cone", "params": {"h": 0.56, "r1": 0.35, "r2": 0.03}, "rotation": {"axis": "x", "degrees": 90},
     "translation": [0.18, -0.19, -0.06]},
    {"type": "torus", "params": {"R": 0.4, "r": 0.14}, "rotation": {"axis": "y", "degrees": 0},
     "translation": [-0.24, -0.07, 0.26]},
    {"type": "torus", "params": {"R": 0.31, "r": 0.13}, "rotation": {"axis": "y", "degrees": 180},
     "translation": [-0.03, 0.08, 0.17]}]}


def test_a_model_whose_curved_face_is_only_partly_meshed_keeps_its_exact_drawing(tmp_path):
    path = write_model(HALF_MESHED_TORUS, tmp_path, "half_meshed")
    hlr, outline, _ = _outline(path)
    assert not hlr.outline[1].complete  # the silhouettes of the bare part are unknown: no line is called stray
    result = draw_model("half_meshed", path, str(tmp_path), render_config(), None, "exact")
    assert [(row["status"], row["hlr_method"]) for row in result["views"]] == [("ok", "exact")] * 11


# ----------------------------------------------------------------------------- faces without edges, boxes, volumes


def _edgeless(shape, trimmed: bool = True):
    """``shape``'s faces rebuilt on their surfaces with no edge at all (what OCCT read from an AP242 file)."""
    builder, compound = BRep_Builder(), TopoDS_Compound()
    builder.MakeCompound(compound)
    for face in indexed_subshapes(shape, TopAbs_FACE):
        face = to_face(face)
        surface = BRep_Tool.Surface_s(face)
        if trimmed:
            surface = Geom_RectangularTrimmedSurface(surface, *BRepTools.UVBounds_s(face))
        bare = TopoDS_Face()
        builder.MakeFace(bare, surface, 1e-7)
        bare.Orientation(face.Orientation())
        builder.Add(compound, bare)
    return compound


def _model_row(tmp_path: Path, shape, name: str) -> dict:
    path = tmp_path / f"{name}.brep"
    cad.write_brep(shape, path)
    out = tmp_path / "out"
    cfg = load_config(None, ['models.source="files"', f'models.files.root="{tmp_path}"', f'out="{out}"'])
    unit = {"unit_id": name, "model_id": name, "source": "file", "source_path": str(path)}
    return model_task(unit, ModelSettings.from_config(cfg, out)).row.as_dict()


def test_faces_without_edges_are_rebuilt_on_their_natural_bounds_and_named(tmp_path):
    row = _model_row(tmp_path, _edgeless(BRepPrimAPI_MakeBox(3.0, 2.0, 1.0).Shape()), "bare_box")
    assert row["status"] == "ok", row["error"]
    assert row["n_edges"] == 12 and row["n_faces"] == 6
    assert np.allclose(row["bbox_min"], [0, 0, 0], atol=1e-6) and np.allclose(row["bbox_max"], [3, 2, 1], atol=1e-6)
    assert row["volume"] == pytest.approx(6.0) or row["n_solids"] == 0
    assert "6 face(s) without edges rebuilt" in row["quality_reason"]


def test_faces_without_edges_on_unbounded_surfaces_fail_with_one_line(tmp_path):
    row = _model_row(tmp_path, _edgeless(BRepPrimAPI_MakeBox(3.0, 2.0, 1.0).Shape(), trimmed=False), "planes")
    assert row["status"] == "failed"
    assert row["error"].endswith("6 face(s) carry no edges and 6 of them lie on unbounded surfaces, so no boundary "
                                 "can be rebuilt (nothing to draw)")


def test_a_solid_turned_inside_out_is_stored_reversed_with_a_positive_volume(tmp_path):
    row = _model_row(tmp_path, BRepPrimAPI_MakeBox(3.0, 2.0, 1.0).Shape().Reversed(), "inside_out")
    assert row["status"] == "ok", row["error"]
    assert row["volume"] == pytest.approx(6.0)
    assert "1 solid(s) turned inside out (negative volume) stored reversed" in row["quality_reason"]
    assert cad.shape_stats(cad.read_shape(tmp_path / "out" / row["brep_path"]))["volume"] == pytest.approx(6.0)


def test_a_recorded_box_of_zero_size_that_occts_own_box_contradicts_is_named():
    """The AP242 case: a box measured as [0,0,0]-[0,0,0] for a part OCCT bounds at 3 x 2 x 1 is never recorded."""
    box = BRepPrimAPI_MakeBox(3.0, 2.0, 1.0).Shape()
    stats = {**cad.shape_stats(box), "bbox_min": [0.0, 0.0, 0.0], "bbox_max": [0.0, 0.0, 0.0]}
    assert shape_contradiction(box, stats).startswith("its tight bounding box has zero size while OCCT's loose box "
                                                      "is 3 x 2 x 1")
    assert shape_contradiction(box, cad.shape_stats(box)) == ""


def test_a_model_without_edges_is_failed_in_every_view_not_drawn_blank(tmp_path):
    path = tmp_path / "bare.brep"
    cad.write_brep(_edgeless(BRepPrimAPI_MakeBox(3.0, 2.0, 1.0).Shape()), path)
    result = draw_model("bare", str(path), str(tmp_path), render_config(), None, "exact")
    assert result["model"]["status"] == "failed"
    assert {row["status"] for row in result["views"]} == {"failed"}
    assert {row["error"] for row in result["views"]} == {NO_EDGES}


# ----------------------------------------------------------------------------------------------- costly shapes


def _spring(turns: int, radius: float = 10.0, pitch: float = 4.0, wire: float = 1.0):
    """A helical spring: a circle swept along a helix (exact HLR runs for minutes on such a shape)."""
    surface = Geom_CylindricalSurface(gp_Ax3(gp_Pnt(0, 0, 0), gp_Dir(0, 0, 1)), radius)
    helix = Geom2d_Line(gp_Pnt2d(0, 0), gp_Dir2d(2 * math.pi, pitch))
    edge = BRepBuilderAPI_MakeEdge(helix, surface, 0.0, turns * math.hypot(2 * math.pi, pitch)).Edge()
    BRepLib.BuildCurves3d_s(edge)
    tangent = gp_Dir(0, 2 * math.pi * radius, pitch)
    profile = BRepBuilderAPI_MakeWire(BRepBuilderAPI_MakeEdge(gp_Circ(gp_Ax2(gp_Pnt(radius, 0, 0), tangent),
                                                                      wire)).Edge()).Wire()
    pipe = BRepOffsetAPI_MakePipeShell(BRepBuilderAPI_MakeWire(edge).Wire())
    pipe.SetMode(True)
    pipe.Add(profile)
    pipe.Build()
    pipe.MakeSolid()
    return pipe.Shape()


def test_a_spring_too_costly_for_exact_and_mesh_hlr_is_drawn_on_a_coarser_mesh_within_budget(tmp_path):
    path = tmp_path / "spring.brep"
    cad.write_brep(_spring(6), path)
    settings = DrawSettings(stage="drawings", seed=0, out_dir=str(tmp_path), timeout_s=6,
                            render=render_config(exact_timeout_s=3))
    # exact HLR runs over its 3 s for real; the mesh algorithm at the usual deflection is made to (a spring of
    # hundreds of turns does); the coarser mesh draws it
    debug = DebugConfig(hang=["drawings-poly:spring"])
    with testhooks.unit_context("drawings", "spring", 0, debug):
        result = draw_task({"unit_id": "spring", "model_id": "spring", "shape_path": str(path)}, settings)
    model = result.row
    assert result.status == "ok", model.error
    assert model.hlr_method == "poly"
    assert "exact HLR timeout" in model.fallback_reason and "poly HLR timeout" in model.fallback_reason
    assert [v["status"] for v in result.views] == ["ok"] * 11
    assert all(v["n_visible"] > 0 for v in result.views)
    assert result.timings.child_cpu_s < 3 + 6 + 6 + 1
