"""Edges that bound no face are left out of the drawing wherever the B-rep stores them (issue 50, item 4).

Some CAD exporters keep a construction line inside a solid, as an edge the solid holds INTERNAL or EXTERNAL, or as
an INTERNAL/EXTERNAL edge or wire of a face. Such an edge has no face to bound: drawn, it framed the whole drawing
(a front view 10 px wide where the model's box said 122 px) and every view still said ``ok``. Each class is built
with OCP here: an edge held by a solid (INTERNAL, EXTERNAL), the same solid inside a compsolid, and a line held by
one of the solid's faces and leaving it (an INTERNAL wire, an INTERNAL edge of its outer wire, an EXTERNAL one). Each
is drawn, by default, exactly as the solid alone is, and counted on the drawings row; ``render.loose_edges`` still
draws it. A line a face holds INTERNAL and that lies on the face, as OCCT's booleans leave one where two primitives
touch (4 of the default config's 240 models), is part of the face: drawn, as before, and not counted.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from OCP.BRep import BRep_Builder
from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeEdge, BRepBuilderAPI_MakeWire
from OCP.BRepPrimAPI import BRepPrimAPI_MakeBox
from OCP.gp import gp_Pnt
from OCP.TopAbs import (
    TopAbs_EDGE, TopAbs_EXTERNAL, TopAbs_FACE, TopAbs_FORWARD, TopAbs_INTERNAL, TopAbs_SOLID, TopAbs_WIRE,
)
from OCP.TopExp import TopExp_Explorer
from OCP.TopoDS import TopoDS_CompSolid, TopoDS_Shape

from drawings_shapes import L_BLOCK, render_config
from spare_gen import cad
from spare_gen.cad.build import loose_edge_count, without_loose_edges
from spare_gen.cad.compat import indexed_subshapes
from spare_gen.cad.hlr import HlrMethod, HlrModel
from spare_gen.cad.props import is_valid, volume
from spare_gen.canvas.poses import THREE_VIEWS, pose
from spare_gen.config import load_config
from spare_gen.jobs.regenerate import run
from spare_gen.stages.drawings.child import draw_model

BOX = (20.0, 10.0, 15.0)  # the part: a box from the origin
SOLID_LINE = ((100.0, 50.0, 40.0), (172.0, 50.0, 40.0))  # a construction line far from the part
FACE_LINE = ((0.0, 20.0, 30.0), (0.0, 90.0, 40.0))  # a line in the plane of the part's x = 0 face, off the face
ON_FACE_LINE = ((0.0, 2.0, 3.0), (0.0, 8.0, 12.0))  # a line on the part's x = 0 face
# csg_000209 of the default config: its last box's bottom touches the torus's lowest circle, which the union keeps as
# an INTERNAL edge of the box's bottom face (z = -0.3)
TOUCHING = {"operations": ["union", "difference", "union"], "primitives": [
    {"params": {"R": 0.34, "r": 0.14}, "rotation": {"axis": "x", "degrees": 180}, "translation": [0.07, -0.07, -0.16],
     "type": "torus"},
    {"params": {"dx": 0.83, "dy": 0.44, "dz": 0.45}, "rotation": {"axis": "z", "degrees": 180},
     "translation": [0.28, -0.28, -0.24], "type": "box"},
    {"params": {"h": 0.83, "r": 0.19}, "rotation": {"axis": "y", "degrees": 0}, "translation": [0.25, 0.08, 0.08],
     "type": "cylinder"},
    {"params": {"dx": 0.95, "dy": 0.99, "dz": 0.78}, "rotation": {"axis": "z", "degrees": 0},
     "translation": [-0.07, 0.02, 0.09], "type": "box"}]}
EXTENT_PX = 1.0  # an ok view's drawn extent matches the part's projection within this many canvas px


def _edge(line) -> TopoDS_Shape:
    return BRepBuilderAPI_MakeEdge(gp_Pnt(*line[0]), gp_Pnt(*line[1])).Edge()


def _box() -> TopoDS_Shape:
    return BRepPrimAPI_MakeBox(gp_Pnt(0, 0, 0), *BOX).Shape()


def solid_holding(orientation) -> TopoDS_Shape:
    """The part's solid holding SOLID_LINE as an edge of its own (no face, no wire), in this orientation."""
    solid = indexed_subshapes(_box(), TopAbs_SOLID)[0]
    solid.Free(True)
    BRep_Builder().Add(solid, _edge(SOLID_LINE).Oriented(orientation))
    return solid


def compsolid_holding() -> TopoDS_Shape:
    """A compsolid of one solid that holds SOLID_LINE INTERNAL (a compsolid itself takes only solids)."""
    builder, result = BRep_Builder(), TopoDS_CompSolid()
    builder.MakeCompSolid(result)
    builder.Add(result, solid_holding(TopAbs_INTERNAL))
    return result


def _x0_face(shape: TopoDS_Shape) -> TopoDS_Shape:
    face = next(f for f in indexed_subshapes(shape, TopAbs_FACE) if np.allclose(_face_x(f), 0.0))
    face.Free(True)
    return face


def _face_x(face) -> tuple[float, float]:
    from spare_gen.cad.props import bounding_box
    box = bounding_box(face)
    return box[0], box[3]


def face_holding_wire(orientation, line=FACE_LINE) -> TopoDS_Shape:
    """The part whose x = 0 face holds ``line`` as a wire of its own, in this orientation."""
    shape = _box()
    BRep_Builder().Add(_x0_face(shape), BRepBuilderAPI_MakeWire(_edge(line)).Wire().Oriented(orientation))
    return shape


def face_holding_edge(orientation) -> TopoDS_Shape:
    """The part whose x = 0 face holds FACE_LINE as an edge of its outer wire, in this orientation."""
    shape = _box()
    wire = indexed_subshapes(_x0_face(shape), TopAbs_WIRE)[0]
    wire.Free(True)
    BRep_Builder().Add(wire, _edge(FACE_LINE).Oriented(orientation))
    return shape


CLASSES = {
    "solid_internal": (lambda: solid_holding(TopAbs_INTERNAL), SOLID_LINE),
    "solid_external": (lambda: solid_holding(TopAbs_EXTERNAL), SOLID_LINE),
    "compsolid": (compsolid_holding, SOLID_LINE),
    "face_internal_wire": (lambda: face_holding_wire(TopAbs_INTERNAL), FACE_LINE),
    "face_internal_edge": (lambda: face_holding_edge(TopAbs_INTERNAL), FACE_LINE),
    "face_external_edge": (lambda: face_holding_edge(TopAbs_EXTERNAL), FACE_LINE),
}


def _far_corner(line) -> np.ndarray:
    return np.maximum(np.max(line, axis=0), BOX)


@pytest.mark.parametrize("name", CLASSES)
def test_each_class_of_edge_that_bounds_no_face_is_counted_and_left_out_of_the_shape_drawn(name):
    make, line = CLASSES[name]
    shape = make()
    assert loose_edge_count(shape) == 1
    hlr = HlrModel(shape, HlrMethod.EXACT)
    assert hlr.loose_edges == 1
    assert np.allclose(hlr.bbox, (0, 0, 0, *BOX), atol=0.01)  # the box HLR frames from holds the faces alone
    kept, count = without_loose_edges(shape)
    assert count == 1 and loose_edge_count(kept) == 0 and is_valid(kept)
    assert volume(kept) == pytest.approx(np.prod(BOX))
    # OCCT's HLR draws the line as the shape stores it: the box without the edge would not reach the line's far end
    with_line = HlrModel(shape, HlrMethod.EXACT, loose_edges=True)
    assert with_line.loose_edges == 1 and np.allclose(with_line.bbox[3:], _far_corner(line), atol=0.01)


def test_a_solid_with_no_such_edge_is_given_back_as_it_is():
    shape = cad.build_csg(L_BLOCK)
    assert loose_edge_count(shape) == 0
    kept, count = without_loose_edges(shape)
    assert count == 0 and kept is shape


def _held_internal_by_a_face(shape: TopoDS_Shape) -> int:
    held = 0
    for face in indexed_subshapes(shape, TopAbs_FACE):
        explorer = TopExp_Explorer(face.Oriented(TopAbs_FORWARD), TopAbs_EDGE)
        while explorer.More():
            held += explorer.Current().Orientation() == TopAbs_INTERNAL
            explorer.Next()
    return held


def test_a_line_a_csg_union_keeps_on_a_face_where_two_primitives_touch_is_part_of_the_face_not_loose(tmp_path):
    shape = cad.build_csg(TOUCHING)
    assert _held_internal_by_a_face(shape) == 1  # the torus's lowest circle, on the box's bottom face
    assert loose_edge_count(shape) == 0
    kept, count = without_loose_edges(shape)
    assert count == 0 and kept is shape  # drawn as before: the default config's drawings keep their bytes
    drawn = draw_model("touching", str(cad.write_brep(shape, tmp_path / "touching.brep")), str(tmp_path / "a"),
                       render_config(), None, "exact")
    assert drawn["model"]["status"] == "ok" and drawn["model"]["n_loose_edges"] == 0


def test_a_line_a_face_holds_internal_and_that_lies_on_it_is_drawn_and_not_counted(tmp_path):
    on_face = face_holding_wire(TopAbs_INTERNAL, ON_FACE_LINE)
    assert loose_edge_count(on_face) == 0
    drawn = draw_model("on", str(cad.write_brep(on_face, tmp_path / "on.brep")), str(tmp_path / "a"),
                       render_config(), None, "exact")
    alone = draw_model("box", str(cad.write_brep(_box(), tmp_path / "box.brep")), str(tmp_path / "b"),
                       render_config(), None, "exact")
    assert drawn["model"]["status"] == "ok" and drawn["model"]["n_loose_edges"] == 0
    assert drawn["model"]["scale"] == alone["model"]["scale"]
    seen, plain = _by_view(drawn)["r"], _by_view(alone)["r"]
    assert seen["n_visible"] + seen["n_hidden"] == plain["n_visible"] + plain["n_hidden"] + 1


def _by_view(result: dict) -> dict[str, dict]:
    return {v["view"]: v for v in result["views"]}


@pytest.mark.parametrize("name", CLASSES)
def test_a_drawing_of_a_part_with_an_edge_bounding_no_face_is_the_part_alone_framed_by_its_faces(name, tmp_path):
    make, line = CLASSES[name]
    path = str(cad.write_brep(make(), tmp_path / f"{name}.brep"))
    assert loose_edge_count(cad.read_shape(path)) == 1  # the BREP copy keeps the edge where it was stored
    drawn = draw_model(name, path, str(tmp_path / "a"), render_config(), None, "exact")
    alone = draw_model(name, str(cad.write_brep(_box(), tmp_path / "box.brep")), str(tmp_path / "b"),
                       render_config(), None, "exact")
    model = drawn["model"]
    assert model["status"] == "ok" and model["n_loose_edges"] == 1 and alone["model"]["n_loose_edges"] == 0
    assert np.allclose(model["bbox"], (0, 0, 0, *BOX), atol=0.05)
    assert model["scale"] == alone["model"]["scale"]
    views = _by_view(drawn)
    for view in THREE_VIEWS:  # each drawn extent is the part's box projected, in canvas px
        corners = pose(view).project(np.array([[x, y, z] for x in (0, BOX[0]) for y in (0, BOX[1])
                                               for z in (0, BOX[2])]))
        xmin, ymin, xmax, ymax = views[view]["bbox2d"]
        expected = (corners.max(axis=0) - corners.min(axis=0)) * model["scale"]
        assert np.allclose((xmax - xmin, ymax - ymin), expected, atol=EXTENT_PX), (view, views[view]["bbox2d"])
    assert [v["status"] for v in drawn["views"]] == ["ok"] * len(drawn["views"])
    assert [v["png_sha256"] for v in drawn["views"]] == [v["png_sha256"] for v in alone["views"]]
    assert [v["svg_sha256"] for v in drawn["views"]] == [v["svg_sha256"] for v in alone["views"]]


@pytest.mark.parametrize("name", ["solid_internal", "face_internal_wire"])
def test_render_loose_edges_still_draws_an_edge_a_solid_or_face_holds_and_frames_the_drawing_with_it(name, tmp_path):
    make, line = CLASSES[name]
    path = str(cad.write_brep(make(), tmp_path / f"{name}.brep"))
    kept = draw_model(name, path, str(tmp_path / "a"), render_config(loose_edges=True), None, "exact")
    left = draw_model(name, path, str(tmp_path / "b"), render_config(), None, "exact")
    model = kept["model"]
    assert model["status"] == "ok" and model["n_loose_edges"] == 1
    assert np.allclose(model["bbox"][3:], _far_corner(line), atol=0.2)  # the line's far end frames the drawing
    assert model["scale"] < left["model"]["scale"] / 2
    facing = "f" if line is SOLID_LINE else "r"  # a view in which the line shows
    seen, without = _by_view(kept)[facing], _by_view(left)[facing]
    assert seen["n_visible"] + seen["n_hidden"] > without["n_visible"] + without["n_hidden"]


def test_a_run_on_files_with_construction_lines_in_a_solid_and_a_compsolid_draws_and_counts_them(tmp_path):
    """The real mechanism: the files stage reads the user's BREP files, writes its copies, the drawings stage draws
    the copies; each model's row counts its line, and its front view is as wide as the part, not as the line."""
    folder = tmp_path / "cad"
    folder.mkdir()
    cad.write_brep(solid_holding(TopAbs_INTERNAL), folder / "internal.brep")
    cad.write_brep(compsolid_holding(), folder / "compsolid.brep")
    cad.write_brep(face_holding_wire(TopAbs_INTERNAL), folder / "face_line.brep")
    out = tmp_path / "out"
    config = load_config(None, [f'out="{out}"', "runner.workers=1", "runner.progress=false", "runner.dashboard=false",
                                'models.source="files"',
                                f'models.files.root="{folder}"'])
    run(config, stages=("models", "drawings"))
    models = {r["model_id"]: r for r in pq.read_table(out / "models.parquet").to_pylist()}
    drawings = {r["model_id"]: r for r in pq.read_table(out / "drawings.parquet").to_pylist()}
    views = {(r["model_id"], r["view"]): r for r in pq.read_table(out / "views.parquet").to_pylist()}
    assert set(drawings) == {"internal", "compsolid", "face_line"}
    for model_id, row in drawings.items():
        assert models[model_id]["status"] == "ok", models[model_id]["error"]
        assert row["status"] == "ok" and row["n_loose_edges"] == 1, (model_id, row)
        assert np.allclose(row["bbox"], (0, 0, 0, *BOX), atol=0.05), (model_id, row["bbox"])
        xmin, _, xmax, _ = views[(model_id, "f")]["bbox2d"]
        assert xmax - xmin == pytest.approx(BOX[0] * row["scale"], abs=EXTENT_PX), model_id
        assert xmax - xmin > 100  # the part fills the canvas, it is not squeezed to make room for the line
