"""The 11 SPARE3D poses: drawn vertices land where the pose table says, one scale per model, image up is up."""

from __future__ import annotations

import numpy as np
import pytest

from drawings_shapes import L_BLOCK, L_BLOCK_BBOX, L_BLOCK_VERTICES, render_config, write_model
from spare_gen.canvas.poses import FIXED_VIEWS, bbox_from_three_views, framing_for, pose, random_poses
from spare_gen.stages.drawings.child import draw_model
from spare_gen.rng import derive_rng

# The pose table of the brief, typed again here: (N towards the viewer, Vx image right); up = N x Vx.
TABLE = {
    "f": ((0, -1, 0), (1, 0, 0)), "r": ((1, 0, 0), (0, 1, 0)), "t": ((0, 0, 1), (1, 0, 0)),
    "1": ((-1, -1, 1), (1, -1, 0)), "2": ((1, -1, 1), (1, 1, 0)), "3": ((1, 1, 1), (-1, 1, 0)),
    "4": ((-1, 1, 1), (-1, -1, 0)), "5": ((-1, -1, -1), (1, -1, 0)), "6": ((1, -1, -1), (1, 1, 0)),
    "7": ((1, 1, -1), (-1, 1, 0)), "8": ((-1, 1, -1), (-1, -1, 0)),
}
SIZE, MARGIN = 200, 1.15


def axes(view: str) -> tuple[np.ndarray, np.ndarray]:
    n, vx = (np.asarray(v, float) / np.linalg.norm(v) for v in TABLE[view])
    return vx, np.cross(n, vx)


def expected_px(point, view: str, scale: float, centre) -> np.ndarray:
    vx, up = axes(view)
    rel = np.asarray(point, float) - np.asarray(centre, float)
    return np.array([SIZE / 2 + scale * rel @ vx, SIZE / 2 - scale * rel @ up])  # SVG/PNG y grows downwards


def endpoints(row: dict) -> np.ndarray:
    lines = row["visible"] + row["hidden"]
    return np.array([p for line in lines for p in (line[0], line[-1])])


@pytest.fixture(scope="module")
def l_block(tmp_path_factory):
    folder = tmp_path_factory.mktemp("l_block")
    path = write_model(L_BLOCK, folder, "l_block")
    return draw_model("l_block", path, str(folder), render_config(size=SIZE, margin=MARGIN), None, "exact")


def test_pose_module_matches_the_table():
    assert FIXED_VIEWS == ("f", "r", "t", "1", "2", "3", "4", "5", "6", "7", "8")
    for view in FIXED_VIEWS:
        vx, up = axes(view)
        p = pose(view)
        np.testing.assert_allclose(p.x_direction, vx, atol=1e-12)
        np.testing.assert_allclose(p.up, up, atol=1e-12)
    np.testing.assert_allclose(pose("f").up, (0, 0, 1))  # F: +Z up
    np.testing.assert_allclose(pose("t").up, (0, 1, 0))  # T: +Y up
    np.testing.assert_allclose(pose("r").up, (0, 0, 1))  # R: +Z up


def test_one_scale_and_centre_per_model(l_block):
    model = l_block["model"]
    corners = np.array([[x, y, z] for x in (0, 4) for y in (0, 2) for z in (0, 3)], float)
    extent = max(np.ptp(corners @ np.stack(axes(v)).T, axis=0).max() for v in FIXED_VIEWS)
    assert model["scale"] == pytest.approx(SIZE / (MARGIN * extent), rel=1e-6)
    np.testing.assert_allclose(model["center"], (2.0, 1.0, 1.5), atol=1e-6)
    np.testing.assert_allclose(model["bbox"], L_BLOCK_BBOX, atol=1e-6)


@pytest.mark.parametrize("view", FIXED_VIEWS)
def test_vertices_land_where_the_pose_table_says(l_block, view):
    model = l_block["model"]
    row = next(r for r in l_block["views"] if r["view"] == view)
    ends = endpoints(row)
    for vertex in L_BLOCK_VERTICES:
        want = expected_px(vertex, view, model["scale"], model["center"])
        assert np.hypot(*(ends - want).T).min() < 0.02, f"vertex {vertex} not drawn at {want} in view {view}"
    assert 0 <= ends.min() and ends.max() <= SIZE  # nothing clipped


def test_image_up_is_up(l_block):
    rows = {r["view"]: r for r in l_block["views"]}
    top_of = {v: min(p[1] for line in rows[v]["visible"] for p in line) for v in FIXED_VIEWS}
    scale, centre = l_block["model"]["scale"], l_block["model"]["center"]
    # F and R: the tall part's top (z = 3) is the topmost ink; T: the back (y = 2) is at the top
    assert top_of["f"] == pytest.approx(expected_px((0, 0, 3), "f", scale, centre)[1], abs=0.02)
    assert top_of["f"] < SIZE / 2 and top_of["r"] < SIZE / 2
    assert top_of["t"] == pytest.approx(expected_px((0, 2, 0), "t", scale, centre)[1], abs=0.02)
    # the notch (front-top-left corner) is at the top left of F: ink near its inner corner
    notch = expected_px((0.5, 0, 2.5), "f", scale, centre)
    assert notch[0] < SIZE / 2 and notch[1] < SIZE / 2


def test_bbox_from_three_views_reads_world_axes():
    # F shows x (right) and z (up), T shows x and y, R shows y and z
    lines = {"f": [np.array([[-1.0, -3.0], [2.0, 5.0]])], "t": [np.array([[0.0, -4.0], [1.0, 6.0]])],
             "r": [np.array([[-4.0, -3.0], [6.0, 5.0]])]}
    assert bbox_from_three_views(lines) == (-1.0, -4.0, -3.0, 2.0, 6.0, 5.0)
    assert bbox_from_three_views({"f": lines["f"]}) is None  # y seen nowhere


def test_framing_caps_scale_so_no_view_clips():
    # a long thin rod along the body diagonal: any random view may see its full length
    framing = framing_for((0, 0, 0, 10, 10, 10), 200, 1.0)
    assert framing.scale <= 200 / np.sqrt(300) + 1e-12


def test_random_views_are_rotations_and_reproducible(tmp_path):
    path = write_model(L_BLOCK, tmp_path, "l_block")
    unit_rng = derive_rng(7, "drawings", "l_block")  # the unit's generator, as the stage contract derives it
    result = draw_model("l_block", path, str(tmp_path), render_config(random_views=3), unit_rng, "exact")
    rand = [r for r in result["views"] if r["view"].startswith("rand_")]
    assert [r["view"] for r in rand] == ["rand_000", "rand_001", "rand_002"]
    model = result["model"]
    expected_poses = random_poses(3, derive_rng(7, "drawings", "l_block"))
    diag = np.linalg.norm(np.subtract(L_BLOCK_BBOX[3:], L_BLOCK_BBOX[:3]))
    for row, p in zip(rand, expected_poses):
        rot = np.asarray(row["camera_rotation"])
        np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(rot) == pytest.approx(1.0)
        np.testing.assert_allclose(rot[2], p.direction)  # camera looks along -z (OpenGL convention)
        np.testing.assert_allclose(row["camera_position"], np.add(model["center"], diag * rot[2]), atol=1e-9)
        # a vertex projected with the recorded rotation lands on a drawn line end
        ends = endpoints(row)
        for vertex in L_BLOCK_VERTICES[:6]:
            rel = rot @ (np.asarray(vertex, float) - model["center"])
            want = np.array([SIZE / 2 + model["scale"] * rel[0], SIZE / 2 - model["scale"] * rel[1]])
            assert np.hypot(*(ends - want).T).min() < 0.02
        assert row["camera_rotation"] is not None
    assert all(r["camera_rotation"] is None for r in result["views"] if not r["view"].startswith("rand_"))
