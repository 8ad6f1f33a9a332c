"""The spare3d_csg preset draws and cuts like the original SPARE3D generator.

The original rule is re-implemented here from its description (model2svg.py, svg2png.py, boolean.py), not from
spare_gen's drawing code: the HLR edge classes it keeps (sharp + silhouette, visible and hidden; no smooth G1
edges), a square viewBox of side 1.7 x the largest edge of the model's 3D box (OCCT's B-rep box of the STEP-read
shape, as boolean.py computed it; equal to the tight box on the first models, loose on a tilted torus) centred on
the 2D box of the view's own polylines, a 200 px canvas, y pointing down. Models are purpose-built with a known
bounding box: a CSG union, a box with a through hole, a box with rounded (tangent, G1) vertical edges, a cylinder,
a tilted torus. For all 11 poses the
project's polylines must lie within 0.5 px of the independent ones (and back), the viewBox must agree within 0.5 px,
and the SVG must carry the preset's widths and round caps. The cutter family's removed-volume distribution must
match the original rule's sampled independently (Python's ``random``, as boolean.py used) on the same models.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from OCP.Bnd import Bnd_Box
from OCP.BRepBndLib import BRepBndLib
from PIL import Image
from scipy.spatial import cKDTree

from drawings_shapes import HOLED_BOX, box, prim, program, render_config, write_model
from spare_gen import cad
from spare_gen.cad.curves2d import compound_polylines
from spare_gen.cad.cut import cut_with, removed_fraction
from spare_gen.cad.hlr import run_exact
from spare_gen.cad.hlr_shape import prepare_shape
from spare_gen.cad.props import bounding_box, volume
from spare_gen.config import load_config
from spare_gen.config.schema import TaskName
from spare_gen.canvas.poses import fixed_poses
from spare_gen.stages.drawings.child import draw_model
from spare_gen.stages.questions.tasks import question_settings
from spare_gen.stages.questions.tasks.three_view_to_isometric.child import make_cut_set
from spare_gen.stages.questions.tasks.three_view_to_isometric.cutters_spare3d import spare3d_cutter
from spare_gen.rng import derive_rng

CANVAS = 200
FACTOR = 1.7  # SPARE3D-CSG viewBox side / largest bbox edge
TOLERANCE_PX = 0.5
SAMPLE_PX = 0.1
DEFLECTION = 0.0005  # fine curves on both sides, so the comparison measures the rule, not the discretisation

ROUNDED_R = 0.4
ROUNDED_BOX = program(  # 3 x 2 x 1 with its four vertical edges rounded: planes meet cylinders tangentially (G1)
    [box(3, 2 - 2 * ROUNDED_R, 1), box(3 - 2 * ROUNDED_R, 2, 1)]
    + [prim("cylinder", {"r": ROUNDED_R, "h": 1}, at=(sx * (1.5 - ROUNDED_R), sy * (1 - ROUNDED_R), 0))
       for sx in (-1, 1) for sy in (-1, 1)],
    ["union"] * 5,
)
UNION = program([box(2, 1, 1), prim("cylinder", {"r": 0.4, "h": 1.6}, at=(0.5, 0, 0.5))], ["union"])
CYLINDER = program([prim("cylinder", {"r": 0.5, "h": 2})])
# name -> (program, largest edge of its 3D bounding box, known from the construction)
MODELS = {
    "union": (UNION, 2.0),  # x [-1, 1], y [-0.5, 0.5], z [-0.5, 1.3]
    "holed_box": (HOLED_BOX, 2.0),
    "rounded_box": (ROUNDED_BOX, 3.0),
    "cylinder": (CYLINDER, 2.0),
}
SHARP_AND_SILHOUETTE = (("VCompound", "OutLineVCompound"), ("HCompound", "OutLineHCompound"))


def original_rule(shape, largest_edge: float, pose) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Visible and hidden polylines in canvas px as the original generator places them."""
    compounds = run_exact(prepare_shape(shape).exact, pose.direction, pose.x_direction)
    diagonal = largest_edge * np.sqrt(3)
    visible, hidden = (compound_polylines([compounds[n] for n in names], DEFLECTION * diagonal)
                       for names in SHARP_AND_SILHOUETTE)
    points = np.concatenate(visible + hidden)
    centre = (points.min(axis=0) + points.max(axis=0)) / 2.0  # the 2D box of this view's own lines
    side = FACTOR * largest_edge  # viewBox side, model units

    def px(line):
        return np.column_stack([CANVAS / 2 + (line[:, 0] - centre[0]) * CANVAS / side,
                                CANVAS / 2 - (line[:, 1] - centre[1]) * CANVAS / side])
    return [px(v) for v in visible], [px(h) for h in hidden]


def samples(lines) -> np.ndarray:
    out = [np.zeros((0, 2))]
    for line in lines:
        line = np.asarray(line, dtype=float).reshape(-1, 2)
        for a, b in zip(line[:-1], line[1:]):
            n = max(int(np.ceil(np.hypot(*(b - a)) / SAMPLE_PX)), 1)
            out.append(a + np.linspace(0.0, 1.0, n + 1)[:, None] * (b - a))
    return np.concatenate(out)


def farthest(a, b) -> float:
    """Largest distance from a point of ``a``'s lines to ``b``'s lines (px); inf if ``b`` is empty."""
    pa, pb = samples(a), samples(b)
    if len(pa) == 0:
        return 0.0
    if len(pb) == 0:
        return float("inf")
    return float(cKDTree(pb).query(pa)[0].max())


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    out = tmp_path_factory.mktemp("spare3d_preset")
    render = render_config(preset="spare3d_csg", visible_width=2.0, hidden_width=1.0, deflection=DEFLECTION)
    result = {}
    for name, (prog, edge) in MODELS.items():
        path = write_model(prog, out, name)
        result[name] = (cad.read_shape(path), edge, draw_model(name, path, str(out), render, None, "exact"), path)
    return out, result


@pytest.mark.parametrize("name", list(MODELS))
def test_polylines_and_viewbox_follow_the_original_rule(drawn, name):
    out, result = drawn
    shape, edge, drawing, _ = result[name]
    rows = {r["view"]: r for r in drawing["views"]}
    assert drawing["model"]["scale"] * FACTOR * edge == pytest.approx(CANVAS, abs=TOLERANCE_PX)
    for pose in fixed_poses():
        row = rows[pose.name]
        visible, hidden = original_rule(shape, edge, pose)
        assert row["hlr_method"] == "exact"
        assert farthest(row["visible"], visible) <= TOLERANCE_PX, (name, pose.name)
        assert farthest(visible, row["visible"]) <= TOLERANCE_PX, (name, pose.name)
        assert farthest(row["hidden"], hidden) <= TOLERANCE_PX, (name, pose.name)
        # a hidden line lying under a visible one may be trimmed: it is covered in the picture either way
        assert farthest(hidden, row["hidden"] + row["visible"]) <= TOLERANCE_PX, (name, pose.name)
        # per-view centring: the lines' own box is centred on the canvas
        x0, y0, x1, y1 = row["bbox2d"]
        assert abs((x0 + x1) / 2 - CANVAS / 2) <= TOLERANCE_PX and abs((y0 + y1) / 2 - CANVAS / 2) <= TOLERANCE_PX


def test_smooth_edges_are_left_out_and_the_style_is_the_originals(drawn, tmp_path):
    out, result = drawn
    _, _, spare3d, path = result["rounded_box"]
    default = draw_model("rounded_default", path, str(tmp_path), render_config(deflection=DEFLECTION), None, "exact")
    iso = {r["view"]: r for r in spare3d["views"]}["2"]
    iso_default = {r["view"]: r for r in default["views"]}["2"]
    # spare_gen's own rule draws the 8 tangent (G1) edges of the rounded box; the original leaves them out
    assert iso_default["n_visible"] + iso_default["n_hidden"] > iso["n_visible"] + iso["n_hidden"]
    svg = (out / iso["svg"]).read_text()
    assert re.search(r'id="visible" stroke="#000000" stroke-width="2" stroke-linecap="round"', svg)
    assert re.search(r'id="hidden" stroke="#ff0000" stroke-width="1" stroke-linecap="round"', svg)
    with Image.open(out / iso["png"]) as im:
        pixels = np.asarray(im.convert("RGB")).reshape(-1, 3).astype(int)
    assert im.size == (CANVAS, CANVAS)
    assert (pixels.sum(axis=1) == 0).any()  # a 2 px black line has fully covered pixels
    red = pixels[(pixels[:, 0] > 200) & (pixels[:, 1] < 140) & (pixels[:, 2] < 140)]
    assert len(red) > 0 and red[:, 1].min() < 60  # 1 px hidden lines reach strong red, not pale pink


def original_cutter_removed(shape, bbox, model_volume: float, rnd: random.Random) -> float:
    """One cut as boolean.py's New_shp draws it (box, sphere, sharp cone, cylinder; Z-aligned; A = (X+Y+Z)/5)."""
    lo, hi = np.asarray(bbox[:3]), np.asarray(bbox[3:])
    x, y, z = hi - lo
    mid = (lo + hi) / 2
    position = [rnd.uniform(m - 0.25 * e, m + 0.25 * e) for m, e in zip(mid, (x, y, z))]
    a = (x + y + z) / 5
    kind = rnd.randint(1, 4)
    if kind == 1:
        spec = {"type": "box", "params": {"dx": rnd.uniform(0.5 * a, a), "dy": rnd.uniform(0.5 * a, a),
                                          "dz": rnd.uniform(0.5 * a, a)}}
    elif kind == 2:
        spec = {"type": "sphere", "params": {"r": rnd.uniform(0.25 * a, 0.5 * a)}}
    elif kind == 3:
        r = rnd.uniform(0.25 * a, 0.5 * a)
        spec = {"type": "cone", "params": {"r1": r, "r2": 0.0, "h": rnd.uniform(0.5 * a, a)}}
    else:
        r = rnd.uniform(0.25 * a, 0.5 * a)
        spec = {"type": "cylinder", "params": {"r": r, "h": rnd.uniform(0.5 * a, a)}}
    spec.update(rotation={"axis": "z", "degrees": 0}, translation=position)
    return removed_fraction(model_volume, cut_with(shape, spec))


def test_cut_removal_matches_the_original_rule(drawn):
    _, result = drawn
    n_per_model = 30
    ours, original = [], []
    rnd = random.Random(2020)
    for name, (shape, _, drawing, _) in result.items():
        bbox = drawing["model"]["bbox"]
        model_volume = volume(shape)
        for i in range(n_per_model):
            ours.append(removed_fraction(model_volume, cut_with(shape, spare3d_cutter(bbox, derive_rng(0, name, i)))))
            original.append(original_cutter_removed(shape, bbox, model_volume, rnd))
    ours_median, original_median = float(np.median(ours)), float(np.median(original))
    assert abs(ours_median - original_median) <= 0.03, (ours_median, original_median)
    assert abs(np.mean(ours) - np.mean(original)) <= 0.03
    assert 0.0 <= min(ours) and max(ours) < 0.9


def test_cut_sets_use_the_original_family_and_acceptance(drawn, tmp_path):
    _, result = drawn
    _, _, drawing, path = result["union"]
    render = render_config(preset="spare3d_csg", visible_width=2.0, hidden_width=1.0)
    config = load_config(None, ["questions.cutters=spare3d", "questions.max_cut_attempts=12",
                                "questions.duplicate_tolerance_px=1.5"])
    settings = question_settings(config, tmp_path, TaskName.THREE_VIEW_TO_ISOMETRIC).model_copy(
        update={"render": render})
    unit = {"model_id": "union", "shape_path": path, "hlr_method": "exact",
            "framing": {"scale": drawing["model"]["scale"], "center": drawing["model"]["center"]}}
    cuts = make_cut_set(unit, settings)
    assert cuts["accepted"], cuts
    specs = [c["cutter"] for c in cuts["cuts"]]
    assert {s["type"] for s in specs} <= {"box", "sphere", "cone", "cylinder"}
    assert all(s["rotation"] == {"axis": "z", "degrees": 0} for s in specs)
    assert all(s["params"]["r2"] == 0.0 for s in specs if s["type"] == "cone")
    iso = [c["views"]["2"] for c in cuts["cuts"]]
    assert len({v["png_sha256"] for v in iso}) == 4  # pixel-identical candidates are the only ones refused
    for view in iso:  # the original model's scale, each drawing centred on its own lines
        pts = samples(view["visible"] + view["hidden"])
        centre = (pts.min(axis=0) + pts.max(axis=0)) / 2
        assert np.abs(centre - CANVAS / 2).max() <= TOLERANCE_PX
        assert view["scale"] == drawing["model"]["scale"]


def test_abc_preset_uses_the_14_viewbox_and_the_default_is_unchanged(drawn, tmp_path):
    from spare_gen.config import load_config

    _, result = drawn
    path = result["holed_box"][3]
    abc = draw_model("holed_abc", path, str(tmp_path), render_config(preset="spare3d_abc"), None, "exact")
    assert abc["model"]["scale"] * 1.4 * 2.0 == pytest.approx(CANVAS, abs=TOLERANCE_PX)
    default = load_config(None, [])
    assert (default.render.preset.value, default.questions.cutters.value) == ("spare_gen", "spare_gen")
    assert (default.render.visible_width, default.render.hidden_width) == (0.7, 0.35)
    preset = load_config(None, ['render.preset="spare3d_csg"'])
    assert (preset.render.visible_width, preset.render.hidden_width) == (2.0, 1.0)
    assert load_config(None, ['render.preset="spare3d_csg"', "render.hidden_width=0.5"]).render.hidden_width == 0.5


# A torus tilted 35 degrees about X: OCCT's B-rep box of it is loose (the original's box), its tight box is not.
TILTED_TORUS = program([prim("torus", {"R": 1.0, "r": 0.35}, "x", 35)])


def original_box(step_path) -> np.ndarray:
    """The box model2svg.py sized the viewBox by: boolean.py's get_boundingbox on the shape read from the STEP file."""
    box = Bnd_Box()
    box.SetGap(1e-6)
    BRepBndLib.Add_s(cad.read_shape(step_path), box, False)
    lo, hi = box.CornerMin(), box.CornerMax()
    return np.array([lo.X(), lo.Y(), lo.Z(), hi.X(), hi.Y(), hi.Z()])


def test_the_viewbox_follows_the_originals_brep_box_on_a_torus(tmp_path):
    shape = cad.build_csg(TILTED_TORUS)
    step = tmp_path / "torus.step"
    cad.write_step(shape, step)
    brep = write_model(TILTED_TORUS, tmp_path, "torus")
    loose = original_box(step)
    largest = float(np.max(loose[3:] - loose[:3]))
    tight = np.array(bounding_box(cad.read_shape(step)))
    assert largest > 1.05 * float(np.max(tight[3:] - tight[:3]))  # the rule matters on this model
    render = render_config(preset="spare3d_csg", deflection=DEFLECTION)
    drawing = draw_model("torus", brep, str(tmp_path), render, None, "exact")
    assert drawing["model"]["status"] == "ok"
    assert drawing["model"]["scale"] * FACTOR * largest == pytest.approx(CANVAS, abs=1e-6 * CANVAS)
    own = draw_model("torus_own", brep, str(tmp_path), render_config(deflection=DEFLECTION), None, "exact")
    assert own["model"]["bbox"] == pytest.approx(list(tight), abs=DEFLECTION * 4)  # spare_gen's rule: the tight box
