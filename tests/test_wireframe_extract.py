"""Ground-truth wireframe extraction from B-reps: CSG solids with known answers and real CAD files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from spare_gen import cad
from spare_gen.stages.pool.child import (
    brep_wireframe,
    denormalise,
    extract_wireframe,
    merge_close_points,
    normalise,
)
from spare_gen.wireframe import CORNER, CURVE, Wireframe


def solid(kind: str, params: dict, translation=(0.0, 0.0, 0.0)):
    spec = {"type": kind, "params": params, "translation": list(translation)}
    return cad.build_csg({"primitives": [spec], "operations": []})


def degrees(wf) -> np.ndarray:
    return np.bincount(wf.edges.ravel(), minlength=len(wf.vertices))


def bbox_diagonal(vertices: np.ndarray) -> float:
    return float(np.linalg.norm(vertices.max(axis=0) - vertices.min(axis=0)))


def assert_clean_graph(wf) -> None:
    """No self-loops, no repeated edges, no isolated vertices, CURVE points inside chains (degree 2)."""
    g = Wireframe(wf.vertices, wf.edges, wf.kinds).validate()
    assert np.all(g.edges[:, 0] != g.edges[:, 1])
    assert len(np.unique(g.canonical_edges(), axis=0)) == g.n_edges
    deg = degrees(g)
    assert deg.min() >= 1
    assert np.all(deg[g.kinds == CURVE] == 2)


# ------------------------------------------------------------------------------------------- CSG solids


def test_box_is_eight_corners_and_twelve_edges_with_exact_geometry():
    w = brep_wireframe(solid("box", {"dx": 1.0, "dy": 2.0, "dz": 3.0}, translation=(10.0, -4.0, 2.5)))
    assert (len(w.vertices), len(w.edges)) == (8, 12)
    assert np.all(w.kinds == CORNER) and np.all(degrees(w) == 3)
    assert w.scale == pytest.approx(math.sqrt(14.0))
    np.testing.assert_allclose(w.centre, [10.0, -4.0, 2.5], atol=1e-9)
    # normalised corners are (+-0.5, +-1, +-1.5) / sqrt(14); edge lengths 1, 2, 3 (four each) / sqrt(14)
    np.testing.assert_allclose(np.sort(np.abs(w.vertices), axis=0)[0], np.array([0.5, 1.0, 1.5]) / math.sqrt(14))
    lengths = np.sort(np.linalg.norm(np.diff(w.vertices[w.edges], axis=1)[:, 0], axis=1))
    np.testing.assert_allclose(lengths, np.repeat([1.0, 2.0, 3.0], 4) / math.sqrt(14), rtol=1e-12)
    assert bbox_diagonal(w.vertices) == pytest.approx(1.0)
    model = w.to_model_units()
    np.testing.assert_allclose(model.min(axis=0), [9.5, -5.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(model.max(axis=0), [10.5, -3.0, 4.0], atol=1e-9)


def test_cylinder_is_two_closed_circles_without_the_seam():
    r, h, deflection = 0.3, 1.0, 0.01
    w = brep_wireframe(solid("cylinder", {"r": r, "h": h}), deflection)
    assert_clean_graph(w)
    assert w.dropped["seam"] == 1 and w.dropped["degenerate"] == 0
    model = w.to_model_units()
    z = np.round(model[:, 2], 9)
    assert sorted(set(z.tolist())) == [-0.5, 0.5]  # every point on one of the two rims
    seg = model[w.edges]
    assert np.all(seg[:, 0, 2] == seg[:, 1, 2])  # no edge runs along the axis: the seam is gone
    for rim in (-0.5, 0.5):
        on_rim = z == rim
        assert np.count_nonzero(w.kinds[on_rim] == CORNER) == 1  # the seam vertex closes the circle
        n_rim_edges = np.count_nonzero(on_rim[w.edges[:, 0]])
        assert n_rim_edges == np.count_nonzero(on_rim) >= 3  # a closed chain: as many edges as points
        np.testing.assert_allclose(np.linalg.norm(model[on_rim, :2], axis=1), r, rtol=1e-9)
    # chord error within the deflection (a fraction of the shape's bounding-box diagonal)
    mid = seg.mean(axis=1)
    sagitta = r - np.linalg.norm(mid[:, :2], axis=1)
    assert sagitta.max() <= deflection * math.sqrt((2 * r) ** 2 * 2 + h**2) + 1e-12
    assert bbox_diagonal(w.vertices) == pytest.approx(1.0)


def test_finer_deflection_gives_more_curve_points():
    shape = solid("cylinder", {"r": 0.3, "h": 1.0})
    coarse, fine = brep_wireframe(shape, 0.02), brep_wireframe(shape, 0.002)
    assert np.count_nonzero(fine.kinds == CURVE) > 2 * np.count_nonzero(coarse.kinds == CURVE)


def test_cone_keeps_its_base_circle_and_drops_apex_and_seam():
    w = brep_wireframe(solid("cone", {"r1": 0.4, "r2": 0.0, "h": 1.0}))
    assert w.dropped["degenerate"] == 1 and w.dropped["seam"] == 1
    model = w.to_model_units()
    np.testing.assert_allclose(model[:, 2], -0.5, atol=1e-9)  # only the base rim is left
    assert np.count_nonzero(w.kinds == CORNER) == 1


def test_sphere_has_no_feature_edges():
    with pytest.raises(ValueError, match="no feature edges.*degenerate 2, seam 1"):
        brep_wireframe(solid("sphere", {"r": 0.5}))


def test_keep_seams_adds_the_cylinder_seam_line():
    shape = solid("cylinder", {"r": 0.3, "h": 1.0})
    with_seam = brep_wireframe(shape, keep_seams=True)
    without = brep_wireframe(shape)
    assert len(with_seam.edges) == len(without.edges) + 1
    assert with_seam.dropped["seam"] == 0


# ------------------------------------------------------------------------------------------ real files


def test_l_bracket_file(real_cad):
    shape = cad.read_shape(real_cad / "bug3883_xr2-ct-214_l-bracket.stp")
    w = brep_wireframe(shape)
    assert_clean_graph(w)
    # a 50 x 60 x 100 box; all 28 B-rep vertices are corners; its 8 split lines (cylinder halves) are dropped
    assert w.scale == pytest.approx(math.sqrt(50**2 + 60**2 + 100**2), rel=1e-6)
    np.testing.assert_allclose(w.centre, [25.0, 30.0, 50.0], atol=1e-5)
    assert np.count_nonzero(w.kinds == CORNER) == cad.shape_stats(shape)["n_vertices"] == 28
    assert (w.dropped["split"], w.dropped["seam"], w.dropped["degenerate"]) == (8, 0, 0)
    # every kept B-rep edge is one chain: segments - inner points = 42 - 8 B-rep edges
    assert len(w.edges) - np.count_nonzero(w.kinds == CURVE) == 42 - 8


def test_nist_brep_and_io1_step(real_cad):
    nist = brep_wireframe(cad.read_shape(real_cad / "nist_ctc_01.brep"))
    assert_clean_graph(nist)
    assert (nist.dropped["degenerate"], nist.dropped["split"]) == (4, 22)
    assert nist.scale == pytest.approx(math.sqrt(800**2 + 450**2 + 150**2), rel=1e-6)
    io1 = brep_wireframe(cad.read_shape(real_cad / "io1-ug-214.stp"))
    assert_clean_graph(io1)
    assert io1.dropped["seam"] == 12
    for w in (nist, io1):
        assert bbox_diagonal(w.vertices) == pytest.approx(1.0)
        np.testing.assert_allclose(denormalise(w.vertices, w.centre, w.scale), w.to_model_units())


def test_unsewn_faces_give_one_line_per_shared_edge(real_cad):
    """bearing.iges: every face has its own copy of its edges; copies must merge, not double the lines."""
    w = brep_wireframe(cad.read_shape(real_cad / "bearing.iges"))
    assert_clean_graph(w)
    nearest = np.sort(np.linalg.norm(w.vertices[:, None] - w.vertices[None], axis=2), axis=1)[:, 1]
    assert nearest.min() > 1e-6  # no two vertices left at the same place


def test_child_function_row(real_cad):
    row = extract_wireframe("bracket", str(real_cad / "bug3883_xr2-ct-214_l-bracket.stp"), 0.01)
    assert (row.status, row.error, row.model_id) == ("ok", "", "bracket")
    assert row.n_vertices == len(row.vertices) == len(row.vertex_kinds)
    assert row.n_edges == len(row.edges) and row.n_corners == 28
    assert json.loads(row.dropped_edges)["split"] == 8
    np.testing.assert_allclose(row.centre, [25.0, 30.0, 50.0], atol=1e-5)


def test_child_function_reports_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        extract_wireframe("m", str(tmp_path / "missing.brep"), 0.01)


# ------------------------------------------------------------------------------------- pure numpy parts


def test_merge_close_points_by_hand():
    points = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 1e-9], [5, 5, 5], [0, 2, 0]], dtype=float)
    kinds = np.array([CORNER, CURVE, CORNER, CORNER, CURVE], dtype=np.uint8)
    edges = np.array([[0, 1], [2, 0], [1, 2], [3, 3], [4, 0]])
    v, k, e = merge_close_points(points, kinds, edges, 1e-6)
    # 1 and 2 merge (a corner: one member is); (2, 0) repeats (0, 1); (1, 2) and (3, 3) become loops; 3 unused
    np.testing.assert_array_equal(v, [[0, 0, 0], [1, 0, 0], [0, 2, 0]])
    np.testing.assert_array_equal(k, [CORNER, CORNER, CURVE])
    np.testing.assert_array_equal(e, [[0, 1], [2, 0]])


def test_normalise_round_trip_and_bad_input():
    pts = np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 3.0]])
    v, centre, scale = normalise(pts)
    assert scale == 5.0
    np.testing.assert_array_equal(centre, [2.5, 4.0, 3.0])
    np.testing.assert_allclose(v, [[-0.3, -0.4, 0.0], [0.3, 0.4, 0.0]])
    np.testing.assert_allclose(denormalise(v, centre, scale), pts)
    with pytest.raises(ValueError, match="diagonal is 0.0"):
        normalise(np.ones((3, 3)))
