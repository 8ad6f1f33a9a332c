"""Near-duplicate drawing rule, pose-symmetry checks, cutters and surface sampling (pure, fast)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spare_gen.config.tasks.isometric_to_pose import PoseChoices
from spare_gen.config.tasks.isometric_to_pose import POSE_CHOICE_SETS
from spare_gen.stages.questions.near_duplicate import (
    Drawing, chamfer, distinct_triples, drawing_distance, duplicate_matrix, near_duplicate, sample_polylines,
)
from spare_gen.stages.questions.tasks.isometric_to_pose import check_isometric_to_pose
from spare_gen.stages.questions.tasks.point_cloud_generation.child import sample_surface
from spare_gen.stages.questions.tasks.pose_to_isometric import candidate_poses, check_pose_to_isometric
from spare_gen.stages.questions.tasks.three_view_to_isometric.cutters import CENTER_JITTER, random_cutter
from spare_gen.rng import derive_rng


def test_sample_polylines_spacing_and_ends():
    pts = sample_polylines([[[0, 0], [2, 0]]], step=0.5)
    assert pts.tolist() == [[0, 0], [0.5, 0], [1, 0], [1.5, 0], [2, 0]]
    assert sample_polylines([], 0.5).shape == (0, 2)
    assert sample_polylines([[[3, 4]]], 0.5).tolist() == [[3, 4]]  # a lone point is kept


def _sample_one_segment_at_a_time(polylines, step=0.5):
    """The definition, one segment at a time: first point, then n = max(1, ceil(L / step)) points per segment."""
    out = []
    for line in polylines:
        pts = np.asarray(line, dtype=np.float64).reshape(-1, 2)
        if len(pts):
            out.append(pts[:1])
        for a, b in zip(pts[:-1], pts[1:]):
            n = max(1, math.ceil(float(np.linalg.norm(b - a)) / step))
            out.append(a + (np.arange(1, n + 1, dtype=np.float64)[:, None] / n) * (b - a))
    return np.concatenate(out) if out else np.zeros((0, 2))


def test_sample_polylines_in_one_pass_equals_the_definition_bit_for_bit():
    rng = np.random.default_rng(7)
    for _ in range(200):  # empty, lone-point, zero-length and long lines mixed, in every order
        lines = [np.round(rng.uniform(0, 200, size=(int(rng.integers(0, 6)), 2)), 2).tolist()
                 for _ in range(int(rng.integers(0, 8)))] + [[[1.0, 1.0], [1.0, 1.0]]] * int(rng.integers(0, 2))
        assert np.array_equal(sample_polylines(lines), _sample_one_segment_at_a_time(lines))


def test_chamfer_of_parallel_lines_is_their_gap():
    a = sample_polylines([[[0, 0], [100, 0]]])
    b = sample_polylines([[[0, 3], [100, 3]]])
    assert chamfer(a, b) == pytest.approx(3.0)
    assert chamfer(a, a) == 0.0
    assert chamfer(a, np.zeros((0, 2))) == math.inf and chamfer(np.zeros((0, 2)), np.zeros((0, 2))) == 0.0


def test_chamfer_is_symmetric_and_counts_a_missing_line():
    square = [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]]
    with_diag = square + [[[0, 0], [10, 10]]]
    a, b = sample_polylines(square), sample_polylines(with_diag)
    assert chamfer(a, b) == pytest.approx(chamfer(b, a))
    # a lies on b (0 one way); a diagonal point (x, x) is min(x, 10 - x) from the square's edges
    inside = (b[:, 0] > 0) & (b[:, 0] < 10) & (b[:, 1] > 0) & (b[:, 1] < 10)
    expected = np.minimum(b[inside, 0], 10 - b[inside, 0]).sum() / len(b) / 2
    assert expected == pytest.approx(0.33, abs=0.01)
    assert chamfer(a, b) == pytest.approx(expected, abs=0.01)


def _drawing(visible, hidden=(), sha=""):
    return Drawing(sample_polylines(visible), sample_polylines(hidden), sha)


def test_near_duplicate_by_tolerance_hidden_lines_and_hash():
    a = _drawing([[[0, 0], [100, 0]]], [[[0, 50], [100, 50]]])
    shifted = _drawing([[[0, 1], [100, 1]]], [[[0, 51], [100, 51]]])
    assert drawing_distance(a, shifted) == pytest.approx(1.0)
    assert near_duplicate(a, shifted, 1.5) and not near_duplicate(a, shifted, 0.5)
    no_hidden = _drawing([[[0, 0], [100, 0]]])
    assert not near_duplicate(a, no_hidden, 1.5)  # differs only in its red hidden line: a different drawing
    far = _drawing([[[0, 80], [100, 80]]], [], "abc")
    assert near_duplicate(_drawing([[[0, 0], [1, 1]]], [], "abc"), far, 1.5)  # identical PNG bytes


def test_near_duplicate_stops_early_but_agrees_with_the_distance_at_every_tolerance():
    rng = np.random.default_rng(3)

    def random_drawing():
        def lines():
            return [np.cumsum(rng.uniform(-3, 3, size=(int(rng.integers(2, 30)), 2)), axis=0) + rng.uniform(0, 200, 2)
                    for _ in range(int(rng.integers(0, 6)))]
        return _drawing(lines(), lines())

    for _ in range(60):
        a, b = random_drawing(), random_drawing()
        d = drawing_distance(a, b)
        for tol in (0.0, 0.5, 1.5, 10.0, 1e9, d, d / 2, np.nextafter(d, np.inf), np.nextafter(d, -np.inf)):
            assert near_duplicate(a, b, tol) == (d < tol), (d, tol)
        assert near_duplicate(a, a, 1e-9)  # identical vectors: distance 0


def test_duplicate_matrix_and_distinct_triples():
    lines = [_drawing([[[0, y], [100, y]]]) for y in (0, 0.2, 30, 60, 90)]
    dup = duplicate_matrix(lines, 1.5)
    assert dup[0, 1] and dup[1, 0] and dup.sum() == 2 and not dup.diagonal().any()
    # query 2: the others are 0,1,3,4; 0 and 1 coincide, so a triple takes at most one of them
    assert distinct_triples(dup, 2) == [(0, 3, 4), (1, 3, 4)]


def _views(ys_by_pose: dict[int, float]) -> dict[str, dict]:
    return {str(p): {"visible": [[[0, y], [100, y]]], "hidden": [], "png_sha256": ""} for p, y in ys_by_pose.items()}


@pytest.mark.parametrize("choice, other", [(PoseChoices.UPPER, 4), (PoseChoices.SPARE3D, 6)])
def test_isometric_to_pose_rejects_coinciding_pose_drawings_among_its_choices_only(choice, other):
    poses = POSE_CHOICE_SETS[choice]
    distinct = _views({p: 10.0 * p for p in range(1, 9)})
    assert check_isometric_to_pose(distinct, 1.5, poses) == {"accepted": True, "rule": None, "coinciding": [],
                                                             "choice_poses": list(poses)}
    same = _views({**{p: 10.0 * p for p in range(1, 9)}, other: 20.0})  # pose `other` draws like pose 2
    result = check_isometric_to_pose(same, 1.5, poses)
    assert not result["accepted"] and result["rule"] == "poses_coincide" and result["coinciding"] == [[2, other]]
    outside = _views({**{p: 10.0 * p for p in range(1, 9)}, 7: 20.0})  # pose 7 is never a choice
    assert check_isometric_to_pose(outside, 1.5, poses)["accepted"]


def test_pose_to_isometric_feasible_poses_and_candidates():
    # poses 1-4 coincide, 5-8 coincide: no pose has 3 distinct others
    two_groups = _views({p: 0.0 if p <= 4 else 50.0 for p in range(1, 9)})
    assert not check_pose_to_isometric(two_groups, 1.5)["accepted"]
    # 1-4 coincide, 5-8 distinct: every pose works (a query from 1-4 takes 5-8 as distractors)
    mixed = _views({p: 0.0 if p <= 4 else 10.0 * p for p in range(1, 9)})
    result = check_pose_to_isometric(mixed, 1.5)
    assert result["accepted"] and result["feasible_poses"] == list(range(1, 9))
    poses = candidate_poses(result["duplicates"], 2, derive_rng(0, "c"))
    assert poses[0] == 2 and len(set(poses)) == 4 and sum(p <= 4 for p in poses) == 1


def test_random_cutter_is_placed_near_the_centre_and_sized_to_the_box():
    bbox = (0.0, 0.0, 0.0, 10.0, 4.0, 2.0)
    kinds = set()
    for i in range(200):
        c = random_cutter(bbox, derive_rng(0, "cut", i))
        kinds.add(c["type"])
        t = np.asarray(c["translation"])
        assert np.all(np.abs(t - [5, 2, 1]) <= CENTER_JITTER * np.array([10, 4, 2]) + 1e-9)
        assert c["rotation"]["axis"] in "xyz" and c["rotation"]["degrees"] in (0, 90, 180, 270)
        assert all(0 < v <= 1.2 * 10 for v in c["params"].values() if v > 0)
    assert kinds == {"sphere", "box", "cone", "torus"}
    assert random_cutter(bbox, derive_rng(0, "cut", 3)) == random_cutter(bbox, derive_rng(0, "cut", 3))
    with pytest.raises(ValueError, match="empty bounding box"):
        random_cutter((0, 0, 0, 0, 0, 0), derive_rng(0, "x"))


def test_sample_surface_is_area_weighted_and_on_the_triangles():
    # two triangles in the z=0 plane with areas 0.5 and 4.5 (ratio 1:9)
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [10, 0, 0], [13, 0, 0], [10, 3, 0]], dtype=float)
    faces = np.array([[0, 1, 2], [3, 4, 5]])
    pts = sample_surface(vertices, faces, 20000, derive_rng(0, "pc"))
    assert pts.shape == (20000, 3) and np.all(pts[:, 2] == 0)
    small = pts[:, 0] < 5
    assert small.mean() == pytest.approx(0.1, abs=0.01)
    assert np.all(pts[small, 0] + pts[small, 1] <= 1 + 1e-12) and np.all(pts[small, :2] >= 0)
    big = pts[~small]
    assert np.all((big[:, 0] - 10) + big[:, 1] <= 3 + 1e-9) and np.all(big[:, 0] >= 10) and np.all(big[:, 1] >= 0)
    again = sample_surface(vertices, faces, 20000, derive_rng(0, "pc"))
    assert np.array_equal(pts, again)
    with pytest.raises(ValueError, match="total area"):
        sample_surface(vertices, np.zeros((0, 3), int), 5, derive_rng(0, "pc"))
