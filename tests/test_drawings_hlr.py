"""Hidden-line removal: hidden lines where occluded (and not under visible ones), silhouettes, no seams."""

from __future__ import annotations

import numpy as np
import pytest

from drawings_shapes import BOX, HOLED_BOX, box, program, prim, render_config, write_model
from spare_gen import cad
from spare_gen.cad.hlr import HlrModel
from spare_gen.stages.drawings.child import draw_model
from spare_gen.canvas.poses import pose

SIZE = 200


def draw(tmp_path, prog, name="m", **render):
    path = write_model(prog, tmp_path, name)
    result = draw_model(name, path, str(tmp_path), render_config(**render), None, "exact")
    return result["model"], {r["view"]: r for r in result["views"]}


def px(model, view_xy):
    """Canvas pixels of image-plane offsets (model units) from the model centre."""
    return SIZE / 2 + model["scale"] * view_xy[0], SIZE / 2 - model["scale"] * view_xy[1]


def as_arrays(lines):
    return [np.asarray(line) for line in lines]


def test_box_has_no_hidden_lines_in_front_top_right(tmp_path):
    model, views = draw(tmp_path, BOX)  # 2 x 1 x 1.5 box centred on the origin
    halves = {"f": (1.0, 0.75), "t": (1.0, 0.5), "r": (0.5, 0.75)}
    for view, (hx, hy) in halves.items():
        assert views[view]["n_hidden"] == 0 and views[view]["hidden"] == []
        lines = as_arrays(views[view]["visible"])
        assert len(lines) == 4
        (x0, y0), (x1, y1) = px(model, (-hx, -hy)), px(model, (hx, hy))
        corners = {(round(x, 2), round(y, 2)) for x in (x0, x1) for y in (y0, y1)}
        assert {(round(float(p[0]), 2), round(float(p[1]), 2)) for line in lines for p in line} == corners
    for view in "12345678":  # a corner view of a box: 9 visible edges, the 3 at the far corner hidden
        assert (views[view]["n_visible"], views[view]["n_hidden"]) == (9, 3)


def test_through_hole_shows_hidden_lines_where_occluded(tmp_path):
    model, views = draw(tmp_path, HOLED_BOX)  # 2-cube, hole of radius 0.4 along Y
    r_px = 0.4 * model["scale"]
    # along the hole (F): the rim is visible, its far rim lies under it and is not drawn as hidden
    assert views["f"]["n_hidden"] == 0
    rim = max(as_arrays(views["f"]["visible"]), key=len)
    np.testing.assert_allclose(np.hypot(rim[:, 0] - SIZE / 2, rim[:, 1] - SIZE / 2), r_px, atol=0.05)
    # across the hole (T, R): two hidden straight lines along Y, the hole's silhouette, at +-r from the centre
    for view, across in (("t", 0), ("r", 1)):  # T: vertical lines (x = const), R: horizontal (y = const)
        hidden = as_arrays(views[view]["hidden"])
        assert len(hidden) == 2 and all(len(h) == 2 for h in hidden)
        assert all(h[0, across] == h[1, across] for h in hidden)
        offsets = sorted(float(h[0, across]) - SIZE / 2 for h in hidden)
        np.testing.assert_allclose(offsets, [-r_px, r_px], atol=0.02)
    assert all(views[v]["n_hidden"] > 0 for v in "12345678")


def test_cylinder_front_view_is_exactly_a_rectangle(tmp_path):
    for degrees in (0, 90):  # seam on the silhouette, then seam facing the viewer
        model, views = draw(tmp_path, program([prim("cylinder", {"r": 1, "h": 2}, "z", degrees)]), f"c{degrees}")
        lines = as_arrays(views["f"]["visible"])
        assert len(lines) == 4 and views["f"]["n_hidden"] == 0
        xs = sorted({round(float(x), 2) for line in lines for x in line[:, 0]})
        assert xs == [round(px(model, (-1, 0))[0], 2), round(px(model, (1, 0))[0], 2)]  # no seam between
        verticals = [line for line in lines if np.ptp(line[:, 0]) < 1e-6]
        assert len(verticals) == 2


def test_sphere_is_its_silhouette_in_every_view(tmp_path):
    model, views = draw(tmp_path, program([prim("sphere", {"r": 1})]))
    for view, row in views.items():
        assert row["n_hidden"] == 0, view
        pts = np.concatenate(as_arrays(row["visible"]))
        radius = np.hypot(pts[:, 0] - SIZE / 2, pts[:, 1] - SIZE / 2)
        np.testing.assert_allclose(radius, model["scale"], atol=0.1)  # no seam meridian inside the disc
        angles = np.sort(np.arctan2(pts[:, 1] - SIZE / 2, pts[:, 0] - SIZE / 2))
        assert np.diff(np.concatenate([angles, [angles[0] + 2 * np.pi]])).max() < 0.3  # closed outline


def test_cone_top_view_two_rims_no_seam(tmp_path):
    model, views = draw(tmp_path, program([prim("cone", {"r1": 1.0, "r2": 0.4, "h": 1.5})]))
    row = views["t"]
    assert row["n_hidden"] == 0
    radii = np.hypot(*(np.concatenate(as_arrays(row["visible"])) - SIZE / 2).T) / model["scale"]
    assert set(np.round(radii, 3)) <= {1.0, 0.4}  # the two rims only: no seam line between them
    assert {1.0, 0.4} <= set(np.round(radii, 3))


def test_torus_silhouette_on_the_seam_is_visible(tmp_path):
    # R = 1, r = 0.3, axis Z. In F the tube ends are half visible circles; the seam meridian lies on the
    # right end's silhouette, where unsplit exact HLR drew it hidden.
    model, views = draw(tmp_path, program([prim("torus", {"R": 1.0, "r": 0.3})]))
    s = model["scale"]
    vis = np.concatenate(as_arrays(views["f"]["visible"]))
    for side in (-1, 1):
        outer = SIZE / 2 + side * 1.3 * s
        assert np.abs(vis[:, 0] - outer).min() < 0.05, f"outer tube silhouette missing on side {side}"
    hid = np.concatenate(as_arrays(views["f"]["hidden"]))
    assert np.abs(hid[:, 0] - SIZE / 2).max() <= 1.0 * s + 0.05  # only the inner halves of the ends are hidden
    radii = np.hypot(*(np.concatenate(as_arrays(views["t"]["visible"])) - SIZE / 2).T) / s
    assert set(np.round(radii, 3)) == {0.7, 1.3}  # T: the two silhouette circles
    assert views["t"]["n_hidden"] == 0


def arc_length_on_circle(lines, centre, radius, tolerance) -> float:
    """Length of the polyline pieces whose both ends lie on the circle (within ``tolerance``)."""
    total = 0.0
    for line in lines:
        on = np.abs(np.hypot(line[:, 0] - centre[0], line[:, 1] - centre[1]) - radius) < tolerance
        total += float(np.linalg.norm(np.diff(line, axis=0), axis=1)[on[:-1] & on[1:]].sum())
    return total


# A 2-unit cube with a radius-0.8 sphere bulging out of its back face (centre y = 1.4: its whole front-view
# silhouette, the circle in the plane y = 1.4, lies outside the cube and behind it), and a torus on a front-bottom
# corner, whose seams make the exact drawing split every closed face (the sphere's too) before HLR.
SPHERE_BEHIND_BOX = program(
    [box(2, 2, 2), prim("sphere", {"r": 0.8}, at=(0.3, 1.4, 0.1)), prim("torus", {"R": 0.5, "r": 0.2}, at=(-1, 0, -1))],
    ["union", "union"],
)


@pytest.mark.parametrize("smooth_edges", [True, False], ids=["spare_gen", "spare3d"])
def test_a_sphere_behind_a_box_keeps_its_hidden_silhouette(tmp_path, smooth_edges):
    shape = cad.build_csg(SPHERE_BEHIND_BOX)
    step = tmp_path / "sphere_box.step"
    cad.write_step(shape, step)
    stored = cad.read_shape(write_model(SPHERE_BEHIND_BOX, tmp_path, "sphere_box"))  # what the drawing stage reads
    front = pose("f")
    # in the front view the silhouette is the circle of radius 0.8 around (0.3, 0.1); the cube's square
    # [-1, 1]^2 hides all of it but the part beyond x = 1 (cos(angle) > 0.7 / 0.8)
    hidden_arc = 0.8 * (2 * np.pi - 2 * np.arccos(0.7 / 0.8))
    for source in (stored, cad.read_shape(step)):  # the BREP copy and the STEP copy give the same silhouette
        hlr = HlrModel(source, "exact", 0.002, smooth_edges=smooth_edges)
        assert hlr.prepared.split  # the path where closed faces are split for exact HLR
        lines = hlr.project(front.direction, front.x_direction)
        assert lines.method.value == "exact"
        assert arc_length_on_circle(lines.hidden, (0.3, 0.1), 0.8, hlr.tolerance) == pytest.approx(hidden_arc, rel=0.01)
        assert arc_length_on_circle(lines.visible, (0.3, 0.1), 0.8, hlr.tolerance) == pytest.approx(
            0.8 * 2 * np.arccos(0.7 / 0.8), rel=0.01)
