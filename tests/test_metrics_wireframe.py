"""Known values of the wireframe metrics on hand-built wireframes, and their edge cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from spare_gen.metrics.matching import match_candidates
from spare_gen.metrics.spectral import laplacian_spectrum, wasserstein2_1d
from spare_gen.metrics.catalog import (
    METRICS,
    Direction,
    corner_prf,
    cylinder_iou,
    edge_chamfer,
    edge_emd,
    edge_hausdorff,
    edge_prf,
    evaluate_all,
    get_metric_names,
    spectral_distance,
    spectral_distance_l1,
    wed,
    wed_s23dr,
)
from spare_gen.rng import derive_rng
from spare_gen.wireframe import CORNER, CURVE, Wireframe

SQUARE = Wireframe([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1], [1, 2], [2, 3], [3, 0]])
# the same square with edge 0-1 split at its midpoint (a CORNER-kind vertex)
SPLIT_SQUARE = Wireframe(
    [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0, 0]], [[0, 4], [4, 1], [1, 2], [2, 3], [3, 0]]
)
EMPTY = Wireframe(np.zeros((0, 3)), np.zeros((0, 2)))


def cube() -> Wireframe:
    v = np.array(list(itertools.product([0, 1], [0, 1], [0, 1])), float) / math.sqrt(3)
    e = [(i, j) for i in range(8) for j in range(i + 1, 8) if np.count_nonzero(v[i] - v[j]) == 1]
    return Wireframe(v, e)


def random_wireframe(key: str, n_vertices: int = 30, n_edges: int = 45) -> Wireframe:
    rng = derive_rng(0, "test-metrics", key)
    v = rng.random((n_vertices, 3)) / math.sqrt(3)
    e = set()
    while len(e) < n_edges:
        i, j = sorted(rng.integers(0, n_vertices, 2).tolist())
        if i != j:
            e.add((i, j))
    return Wireframe(v, sorted(e), (rng.random(n_vertices) < 0.3).astype(np.uint8))


def reversed_edges(wf: Wireframe) -> Wireframe:
    return Wireframe(wf.vertices, wf.edges[:, ::-1], wf.kinds)


def test_split_edge_keeps_corner_recall_but_lowers_edge_f1():
    corners = corner_prf(SPLIT_SQUARE, SQUARE)
    assert corners["recall"] == 1.0
    assert corners["precision"] == pytest.approx(4 / 5)  # the split point is an extra predicted corner
    edges = edge_prf(SPLIT_SQUARE, SQUARE)
    # 3 of 5 predicted edges match; 3 of 4 GT edges are found; the half edges are 0.5 away (Hausdorff)
    assert edges["precision"] == pytest.approx(3 / 5)
    assert edges["recall"] == pytest.approx(3 / 4)
    assert edges["f1"] == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert edges["f1"] < 1.0


def test_corner_metrics_count_every_vertex_by_default_and_corners_only_by_name():
    curvy = Wireframe(SPLIT_SQUARE.vertices, SPLIT_SQUARE.edges, [CORNER] * 4 + [CURVE])
    assert corner_prf(curvy, SQUARE)["precision"] == pytest.approx(4 / 5)  # the paper: every vertex counts
    assert corner_prf(curvy, SQUARE, kinds="corners") == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "offset": 0.0,
                                                          "offset_matched": 0.0}
    scores = evaluate_all(curvy, SQUARE)
    assert scores["corner_precision"] == pytest.approx(4 / 5)
    assert scores["corner_precision_corners"] == scores["corner_f1_corners"] == 1.0
    with pytest.raises(ValueError, match="'some'"):
        corner_prf(curvy, SQUARE, kinds="some")


def test_deformed_curve_points_lower_default_corner_recall():
    """A deformed curve keeps its CORNER vertices but moves its CURVE points: only the default sees it."""
    xs = np.linspace(0, 1, 11)
    arc = Wireframe(np.c_[xs, np.zeros(11), np.zeros(11)], np.c_[np.arange(10), np.arange(1, 11)],
                    [CORNER] + [CURVE] * 9 + [CORNER])
    bent = Wireframe(arc.vertices + np.c_[np.zeros(11), 0.1 * np.sin(np.pi * xs), np.zeros(11)], arc.edges, arc.kinds)
    assert corner_prf(bent, arc)["recall"] == pytest.approx(2 / 11)
    assert corner_prf(bent, arc, kinds="corners")["recall"] == 1.0


def test_corner_offset_charges_an_unmatched_corner_the_threshold_and_aco_averages_matched_ones():
    moved = Wireframe(SQUARE.vertices + [[0.01, 0, 0], [0, 0.005, 0], [0, 0, 0], [0.5, 0, 0]], SQUARE.edges)
    result = corner_prf(moved, SQUARE, threshold=0.02)
    assert result["recall"] == pytest.approx(3 / 4)  # the vertex moved by 0.5 is unmatched
    assert result["offset_matched"] == pytest.approx((0.01 + 0.005 + 0) / 3)  # Building3D's ACO
    assert result["offset"] == pytest.approx((0.01 + 0.005 + 0 + 0.02) / 4)
    assert corner_prf(SQUARE, moved, threshold=0.02)["offset"] == pytest.approx(result["offset"])  # symmetric
    assert corner_prf(EMPTY, EMPTY)["offset"] == 0.0
    assert corner_prf(EMPTY, SQUARE, threshold=0.02)["offset"] == 0.02  # nothing matched: the worst match
    assert METRICS["corner_offset"].direction is Direction.LOWER_IS_BETTER


def s23dr_formula(pv, pe, gv, ge):
    """The challenge's formula written out directly (pre-registration, Hungarian, costs x GT diameter)."""
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist

    pv, gv = np.asarray(pv, float), np.asarray(gv, float)
    pv = (pv - pv.mean(0)) / np.linalg.norm(pv.std(0)) * np.linalg.norm(gv.std(0)) + gv.mean(0)
    diameter = cdist(gv, gv).max()
    r, c = linear_sum_assignment(cdist(pv, gv))
    cost = cdist(pv, gv)[r, c].sum() + 0.25 * diameter * (len(pv) - len(r)) + 0.5 * diameter * (len(gv) - len(r))
    to_gt = dict(zip(r.tolist(), c.tolist()))
    mapped = {frozenset((to_gt[a], to_gt[b])) for a, b in pe if a in to_gt and b in to_gt}
    gt_set = {frozenset(e) for e in ge}
    length = lambda v, e: float(np.linalg.norm(v[e[0]] - v[e[1]]))  # noqa: E731
    cost += sum(length(pv, e) for e in pe if not (e[0] in to_gt and e[1] in to_gt
                                                   and frozenset((to_gt[e[0]], to_gt[e[1]])) in gt_set))
    cost += sum(length(gv, e) for e in ge if frozenset(e) not in mapped)
    return cost / sum(length(gv, e) for e in ge)


def test_wed_s23dr_follows_the_challenge_formula_in_gt_diameters():
    big = Wireframe(SQUARE.vertices * 10, SQUARE.edges)  # diameter 10 sqrt(2), edge length 40
    split = Wireframe(SPLIT_SQUARE.vertices * 10, SPLIT_SQUARE.edges)
    # hand: pre-registration moves the 5 split vertices; their Hungarian cost is what the formula computes;
    # one extra vertex costs 1/4 diameter; the two half edges are deleted (10) and one GT edge inserted (10)
    value = wed_s23dr(split, big)
    assert value == pytest.approx(s23dr_formula(split.vertices, split.edges.tolist(), big.vertices, big.edges.tolist()))
    assert wed_s23dr(big, big) == 0.0
    # without pre-registration movement, a missing vertex is half a diameter: drop vertex 3 of the square
    tri = Wireframe(big.vertices[:3], [[0, 1], [1, 2]])
    assert s23dr_formula(tri.vertices, [[0, 1], [1, 2]], big.vertices, big.edges.tolist()) == pytest.approx(
        wed_s23dr(tri, big))
    # scale invariance: costs follow the GT size, so scaling both changes nothing (unlike absolute costs)
    assert wed_s23dr(Wireframe(split.vertices / 10, split.edges), SQUARE) == pytest.approx(value)
    assert wed(split, big, preregister=True) != pytest.approx(value)
    for key in ("a", "b"):
        a, b = random_wireframe(f"s23-{key}"), random_wireframe(f"s23-{key}2", 25, 40)
        assert wed_s23dr(a, b) == pytest.approx(s23dr_formula(a.vertices, a.edges.tolist(), b.vertices, b.edges.tolist()))


def test_wed_nearest_and_ap_hand_computed():
    # square with vertex 0 duplicated 0.01 away: nearest sends both copies to GT vertex 0 (no deletion)
    dup = Wireframe(np.vstack([SQUARE.vertices, [[0.01, 0, 0]]]), [[0, 1], [1, 2], [2, 3], [3, 0], [4, 1]])
    # move 0.01; the duplicate's edge 4-1 maps onto GT edge 0-1, which the prediction already has: kept
    assert wed(dup, SQUARE, assignment="nearest") == pytest.approx(0.01 / 4)
    # Hungarian must delete one copy (0.25) and its edge 4-1 (length 0.99)
    assert wed(dup, SQUARE) == pytest.approx((0.25 + 0.99) / 4)
    # AP-style: a vertex moved beyond the radius is deleted and re-inserted, with its two edges
    far = Wireframe(SQUARE.vertices + [[0.05, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]], SQUARE.edges)
    deleted = np.linalg.norm(far.vertices[0] - far.vertices[1]) + np.linalg.norm(far.vertices[0] - far.vertices[3])
    assert wed(far, SQUARE, assignment="threshold") == pytest.approx((0.25 + 0.5 + deleted + 2.0) / 4)
    assert wed(far, SQUARE, assignment="threshold", match_radius=0.1) == pytest.approx(0.05 / 4)
    assert wed(far, SQUARE) == pytest.approx(0.05 / 4)
    with pytest.raises(ValueError, match="'best'"):
        wed(far, SQUARE, assignment="best")


def test_edge_emd_charges_what_chamfer_forgives():
    gt = Wireframe([[0, 0, 0], [1, 0, 0]], [[0, 1]])
    lifted = Wireframe([[0, 0, 0.1], [1, 0, 0.1]], [[0, 1]])
    assert edge_emd(lifted, gt) == pytest.approx(0.1)
    # a prediction covering only the first half: chamfer pred->gt is 0, but EMD must carry mass along;
    half = Wireframe([[0, 0, 0], [0.5, 0, 0]], [[0, 1]])
    # the monotone map between uniform measures on [0, 0.5] and [0, 1] moves x by x: mean over [0, 1] of x/2 = 0.25
    assert edge_emd(half, gt) == pytest.approx(0.25, abs=1e-3)
    assert edge_emd(half, gt) == edge_emd(gt, half)
    assert edge_emd(gt, reversed_edges(gt)) == 0.0 and edge_emd(EMPTY, EMPTY) == 0.0
    assert edge_emd(EMPTY, gt) == 1.0
    # duplicated edges do not double the mass (clean edges)
    assert edge_emd(Wireframe(gt.vertices, [[0, 1], [1, 0]]), gt) == 0.0


def test_spectral_l1_is_w1_of_the_spectra():
    # square spectrum {0, 2, 2, 4} vs empty {0}: W1 = mean |q| = (0 + 2 + 2 + 4) / 4 = 2
    assert spectral_distance_l1(EMPTY, SQUARE) == pytest.approx(2.0)
    assert spectral_distance_l1(SQUARE, SQUARE) == 0.0
    scaled = Wireframe(SQUARE.vertices * 2, SQUARE.edges)  # spectrum doubles: {0, 4, 4, 8}
    assert spectral_distance_l1(scaled, SQUARE) == pytest.approx(2.0)
    assert spectral_distance(scaled, SQUARE) == pytest.approx(math.sqrt((0 + 4 + 4 + 16) / 4))


def test_flat_cylinders_leave_the_joint_gap_that_capsules_fill():
    r = 0.02
    seg = Wireframe([[0, 0, 0], [1, 0, 0]], [[0, 1]])
    parallel = Wireframe([[0, r, 0], [1, r, 0]], [[0, 1]])
    lens = (2 * math.acos(0.5) - math.sqrt(3) / 2) * r**2
    tube = math.pi * r**2
    flat = cylinder_iou(parallel, seg, radius=r, n_samples=40_000, ends="flat")
    assert flat["iou"] == pytest.approx(lens / (2 * tube - lens), abs=0.01)
    # a collinear continuation: flat cylinders touch without overlap; capsules overlap in two half balls
    after = Wireframe([[1, 0, 0], [2, 0, 0]], [[0, 1]])
    assert cylinder_iou(after, seg, radius=r, ends="flat")["iou"] == 0.0
    assert cylinder_iou(after, seg, radius=r)["iou"] > 0.0
    half = Wireframe([[0, 0, 0], [0.5, 0, 0]], [[0, 1]])
    assert cylinder_iou(half, seg, radius=r, ends="flat")["iou"] == pytest.approx(0.5, abs=0.01)
    assert cylinder_iou(seg, seg, ends="flat")["iou"] == 1.0
    assert cylinder_iou(EMPTY, seg, ends="flat")["iou"] == 0.0
    with pytest.raises(ValueError, match="'square'"):
        cylinder_iou(seg, seg, ends="square")


@pytest.mark.parametrize("wf", [SQUARE, SPLIT_SQUARE, cube(), random_wireframe("self")], ids=range(4))
def test_identical_wireframes_score_perfectly(wf):
    scores = evaluate_all(wf, wf)
    for name, value in scores.items():
        best = 1.0 if METRICS[name].direction is Direction.HIGHER_IS_BETTER else 0.0
        assert value == pytest.approx(best, abs=1e-12), name


def test_corner_threshold_is_inclusive_and_one_to_one():
    gt = Wireframe([[0, 0, 0]], np.zeros((0, 2)))
    near = Wireframe([[0.019, 0, 0], [0.0, 0.01, 0]], np.zeros((0, 2)))
    far = Wireframe([[0.021, 0, 0]], np.zeros((0, 2)))
    # both predictions are near the single GT corner, but it can be matched once
    assert corner_prf(near, gt) == pytest.approx(
        {"precision": 0.5, "recall": 1.0, "f1": 2 / 3, "offset": 0.015, "offset_matched": 0.01}  # the cheaper matches
    )
    assert corner_prf(far, gt)["recall"] == 0.0


def test_matching_maximises_the_number_of_matches_before_cost():
    # the cheapest single pair (0, 0) would block the two-pair matching (0, 1) + (1, 0)
    rows, cols = match_candidates([0, 0, 1], [0, 1, 0], [0.0, 5.0, 5.0], 2, 2)
    assert sorted(zip(rows.tolist(), cols.tolist())) == [(0, 1), (1, 0)]


def test_edge_match_uses_exact_segment_hausdorff():
    gt = Wireframe([[0, 0, 0], [1, 0, 0]], [[0, 1]])
    shifted = lambda dz: Wireframe([[0, 0, dz], [1, 0, dz]], [[0, 1]])  # noqa: E731
    assert edge_prf(shifted(0.015), gt)["f1"] == 1.0
    assert edge_prf(shifted(0.025), gt)["f1"] == 0.0
    shorter = Wireframe([[0, 0, 0], [0.99, 0, 0]], [[0, 1]])  # Hausdorff 0.01
    half = Wireframe([[0, 0, 0], [0.5, 0, 0]], [[0, 1]])  # Hausdorff 0.5
    assert edge_prf(shorter, gt)["f1"] == 1.0
    assert edge_prf(half, gt)["f1"] == 0.0


def test_wed_hand_computed_split_square():
    # SPLIT -> SQUARE: the split vertex is deleted (0.25), its two half edges deleted (0.5 + 0.5),
    # the GT edge 0-1 inserted (1); normalised by the GT length 4
    assert wed(SPLIT_SQUARE, SQUARE) == pytest.approx((0.25 + 1.0 + 1.0) / 4)
    # SQUARE -> SPLIT: insert the vertex (0.5), insert both halves (1), delete edge 0-1 (1); GT length 4
    assert wed(SQUARE, SPLIT_SQUARE) == pytest.approx((0.5 + 1.0 + 1.0) / 4)
    moved = Wireframe(SQUARE.vertices + [[0, 0, 0], [0, 0, 0], [0, 0, 0.1], [0, 0, 0]], SQUARE.edges)
    assert wed(moved, SQUARE) == pytest.approx(0.1 / 4)  # only the translation is paid


def test_wed_mnn_and_preregistration_hand_computed():
    gt = Wireframe([[0, 0, 0], [1, 0, 0]], [[0, 1]])
    pred = Wireframe([[0.1, 0, 0], [0.2, 0, 0]], [[0, 1]])
    # Hungarian: p0->g0 (0.1), p1->g1 (0.8), the edge maps onto the GT edge
    assert wed(pred, gt) == pytest.approx(0.9)
    # MNN: only p0<->g0 is mutual; delete p1 (0.25), insert g1 (0.5), move 0.1,
    # delete the predicted edge (0.1) and insert the GT edge (1.0)
    assert wed(pred, gt, assignment="mnn") == pytest.approx(0.1 + 0.25 + 0.5 + 0.1 + 1.0)
    scaled = Wireframe(cube().vertices * 2.0 + 3.0, cube().edges)
    assert wed(scaled, cube()) > 1.0
    assert wed(scaled, cube(), preregister=True) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="'greedy'"):
        wed(pred, gt, assignment="greedy")


@pytest.mark.parametrize("assignment", ["hungarian", "mnn"])
@pytest.mark.parametrize("preregister", [False, True])
def test_wed_ignores_edge_direction(assignment, preregister):
    # vertex ids up to 60 make pairs such as {1, 9} whose set iteration order depends on insertion
    gt = random_wireframe("wed-gt", n_vertices=60, n_edges=120)
    pred = random_wireframe("wed-pred", n_vertices=60, n_edges=120)
    pred = Wireframe(gt.vertices + 0.004 * (pred.vertices - 0.3), pred.edges[:60].tolist() + gt.edges[:60].tolist())
    base = wed(pred, gt, assignment=assignment, preregister=preregister)
    assert wed(reversed_edges(pred), gt, assignment=assignment, preregister=preregister) == base
    assert wed(pred, reversed_edges(gt), assignment=assignment, preregister=preregister) == base
    assert wed(reversed_edges(gt), gt, assignment=assignment, preregister=preregister) == pytest.approx(0, abs=1e-12)
    # vertices listed in reverse order: every mapped edge (i, j) arrives as (j', i') with j' > i'
    flip = np.arange(gt.n_vertices)[::-1]
    relabelled = Wireframe(gt.vertices[flip], flip[gt.edges], gt.kinds[flip])
    assert wed(relabelled, gt, assignment=assignment, preregister=preregister) == pytest.approx(0, abs=1e-12)


def test_symmetric_metrics_are_symmetric():
    a, b = random_wireframe("sym-a"), random_wireframe("sym-b")
    b = Wireframe(0.7 * a.vertices + 0.3 * b.vertices, b.edges, b.kinds)  # overlapping but different
    ab, ba = evaluate_all(a, b), evaluate_all(b, a)
    symmetric = [n for n, m in METRICS.items() if m.symmetric]
    assert {"corner_f1", "edge_f1", "edge_chamfer", "edge_hausdorff", "jaccard_distance", "spectral"} <= set(symmetric)
    for name in symmetric:
        assert abs(ab[name] - ba[name]) <= 1e-9, name
    assert ab["corner_precision"] == pytest.approx(ba["corner_recall"])
    assert ab["edge_precision"] == pytest.approx(ba["edge_recall"])


def test_empty_inputs_have_defined_values():
    pred_empty = evaluate_all(EMPTY, SQUARE)
    assert all(math.isfinite(v) for v in pred_empty.values())
    for name in ["corner_precision", "corner_recall", "corner_f1", "edge_precision", "edge_recall", "edge_f1"]:
        assert pred_empty[name] == 0.0
    assert pred_empty["wed"] == pytest.approx((4 * 0.5 + 4.0) / 4)  # insert 4 vertices and 4 unit edges
    assert pred_empty["edge_chamfer"] == pred_empty["edge_hausdorff"] == 1.0
    assert pred_empty["jaccard_distance"] == 1.0
    assert pred_empty["spectral"] == pytest.approx(math.sqrt(6))  # {0} vs square spectrum {0, 2, 2, 4}
    gt_empty = evaluate_all(SQUARE, EMPTY)
    assert gt_empty["wed"] == pytest.approx(4 * 0.25 + 4.0)  # delete everything; no GT length to divide by
    assert gt_empty["corner_f1"] == 0.0
    both = evaluate_all(EMPTY, EMPTY)
    assert both["corner_f1"] == both["edge_f1"] == 1.0
    assert both["wed"] == both["edge_chamfer"] == both["jaccard_distance"] == both["spectral"] == 0.0


def test_duplicate_reversed_self_loop_and_zero_length_edges_are_ignored():
    messy = Wireframe(
        np.vstack([SQUARE.vertices, [[0, 0, 0]]]),  # vertex 4 duplicates vertex 0
        [[0, 1], [1, 0], [0, 1], [1, 2], [2, 3], [3, 0], [2, 2], [0, 4]],
        [CORNER] * 4 + [CURVE],
    )
    scores = evaluate_all(messy, SQUARE)
    assert scores["edge_f1"] == 1.0 and scores["corner_f1_corners"] == 1.0
    assert scores["corner_precision"] == pytest.approx(4 / 5)  # the duplicate vertex is a vertex
    assert scores["edge_chamfer"] == scores["edge_hausdorff"] == scores["jaccard_distance"] == 0.0
    # the extra (duplicate-position) vertex is the only difference WED sees: one deletion
    assert scores["wed"] == pytest.approx(0.25 / 4)
    edge_only = Wireframe([[0, 0, 0], [0, 0, 0]], [[0, 1], [1, 1]])
    assert all(math.isfinite(v) for v in evaluate_all(edge_only, SQUARE).values())


def test_chamfer_and_hausdorff_known_values():
    gt = Wireframe([[0, 0, 0], [1, 0, 0]], [[0, 1]])
    lifted = Wireframe([[0, 0, 0.1], [1, 0, 0.1]], [[0, 1]])
    assert edge_chamfer(lifted, gt) == pytest.approx(0.1)
    assert edge_hausdorff(lifted, gt) == pytest.approx(0.1)
    # an extra unit edge 1 away from the GT: Hausdorff 1 (its far end); chamfer mixes 0 and a ramp
    tee = Wireframe([[0, 0, 0], [1, 0, 0], [0.5, 0, 0], [0.5, 1, 0]], [[0, 1], [2, 3]])
    assert edge_hausdorff(tee, gt) == pytest.approx(1.0, abs=0.003)
    # pred -> gt: half the pred length is at distance 0, the other half averages 0.5: mean 0.25
    assert edge_chamfer(tee, gt) == pytest.approx(0.5 * 0.25, abs=0.002)


def test_spectrum_and_w2_known_values():
    assert laplacian_spectrum(SQUARE) == pytest.approx([0, 2, 2, 4], abs=1e-12)
    path = Wireframe([[0, 0, 0], [1, 0, 0], [1, 2, 0]], [[0, 1], [1, 2]])  # weights 1 and 2
    lap = np.array([[1, -1, 0], [-1, 3, -2], [0, -2, 2]], float)
    assert laplacian_spectrum(path) == pytest.approx(np.linalg.eigvalsh(lap))
    assert wasserstein2_1d([0.0], [1.0, 3.0]) == pytest.approx(math.sqrt(5))
    assert wasserstein2_1d([0.0, 1.0], [0.0, 0.0, 1.0, 1.0]) == 0.0
    assert wasserstein2_1d([3.0, 1.0], [0.0, 2.0]) == pytest.approx(1.0)
    assert spectral_distance(SPLIT_SQUARE, SQUARE) == pytest.approx(
        wasserstein2_1d(laplacian_spectrum(SPLIT_SQUARE), [0, 2, 2, 4])
    )


def test_cylinder_iou_matches_analytic_volumes():
    r = 0.02
    seg = Wireframe([[0, 0, 0], [1, 0, 0]], [[0, 1]])
    parallel = Wireframe([[0, r, 0], [1, r, 0]], [[0, 1]])
    # lens of two discs one radius apart along the length, plus half a ball-ball lens at each end
    inter = (2 * math.acos(0.5) - math.sqrt(3) / 2) * r**2 + 5 * math.pi * r**3 / 12
    capsule = math.pi * r**2 + 4 / 3 * math.pi * r**3
    result = cylinder_iou(parallel, seg, radius=r, n_samples=40_000)
    assert result["iou"] == pytest.approx(inter / (2 * capsule - inter), abs=0.01)
    assert result["jaccard_distance"] == pytest.approx(1 - result["iou"])
    # half the segment cut into 50 overlapping capsules: the overlap weighting keeps the volume right
    xs = np.linspace(0, 0.5, 51)
    half = Wireframe(np.c_[xs, np.zeros(51), np.zeros(51)], np.c_[np.arange(50), np.arange(1, 51)])
    expected = (math.pi * r**2 * 0.5 + 4 / 3 * math.pi * r**3) / capsule
    assert cylinder_iou(half, seg)["iou"] == pytest.approx(expected, abs=0.02)
    assert cylinder_iou(half, seg, seed=3) == cylinder_iou(half, seg, seed=3)

def _reference_containment(points, segments, radius, anchors):
    """The KD-tree search over every segment that the IoU's fast paths must agree with: every (point, segment)
    pair with the point inside the segment's capsule, and whether it is also inside the flat cylinder. Each pair
    is looked for at one anchor (the end point its projection is clamped to, else the midpoint of the piece
    holding its projection), within that anchor's reach; the exact test decides."""
    from scipy.spatial import cKDTree

    from spare_gen.metrics import cylinders as C

    if len(points) == 0 or len(segments) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=bool)
    spacing = C._CANDIDATE_SPACING * radius
    search = float(np.sqrt(radius**2 + (spacing / 2.0) ** 2)) * (1.0 + 1e-9) + 1e-12
    pairs = cKDTree(points).sparse_distance_matrix(anchors.tree, search, output_type="ndarray")
    near = pairs["v"] <= anchors.reach(radius)[pairs["j"]]
    p_idx, j = pairs["i"][near], pairs["j"][near]
    s_idx = anchors.segment_index[j]
    _, _, num, denom, t = C._on_segments(points[p_idx], segments[s_idx])
    n = len(segments)
    kind = np.repeat(np.array([0, 1, 2], dtype=np.int8), [len(anchors.piece_length), n, n])[j]  # piece, start, end
    count = anchors.piece_count[s_idx]
    piece = np.minimum((t * count).astype(np.int64), count - 1) == anchors.piece_index[j]
    mine = np.where(num < 0, kind == 1, np.where(num > denom, kind == 2, (kind == 0) & piece))  # the pair's anchor
    p_idx, s_idx = p_idx[mine], s_idx[mine]
    inside, flat = C._exact_inside(points[p_idx], segments[s_idx], radius)
    return p_idx[inside], s_idx[inside], flat[inside]



@pytest.mark.parametrize("radius", [0.005, 0.02, 0.2])
def test_cylinder_containment_from_where_samples_were_drawn_matches_the_kd_tree_search(radius):
    """The IoU's fast paths (pieces of each segment, the own capsule settled by construction) find exactly the
    (point, capsule, flat) answers of the KD-tree search over every segment, so the IoU's bits do not change."""
    from spare_gen.metrics import cylinders as C
    from spare_gen.metrics.sampling import clean_segments

    xs = np.linspace(0, 0.5, 51)  # many short collinear pieces: heavy overlap of own capsules
    chain = Wireframe(np.c_[xs, 0.01 * np.sin(20 * xs), np.zeros(51)], np.c_[np.arange(50), np.arange(1, 51)])
    rng = derive_rng(0, "test-metrics", "containment")
    shapes = [cube(), SPLIT_SQUARE, chain, random_wireframe("containment")]
    shapes += [Wireframe(w.vertices + rng.normal(0, 0.01, w.vertices.shape), w.edges) for w in shapes]
    segment_sets = [C.canonical_order(clean_segments(w)) for w in shapes]
    inside_other = 0
    for i, segments in enumerate(segment_sets):
        placed = C._placed(segments, radius, C._seeded_draws(0, radius, 4000))
        anchors = C._Anchors(segments, C._CANDIDATE_SPACING * radius)
        pieces = C._Pieces(placed, anchors)
        reference = _reference_containment(placed.points, segments, radius, anchors)
        found = C._own_containment(placed, pieces, segments, radius, anchors)
        assert set(zip(*map(np.ndarray.tolist, found))) == set(zip(*map(np.ndarray.tolist, reference)))
        for other in segment_sets[:i] + segment_sets[i + 1:]:
            other_anchors = C._Anchors(other, C._CANDIDATE_SPACING * radius)
            p_idx, _, flat = _reference_containment(placed.points, other, radius, other_anchors)
            in_round, in_flat = C._any_inside(placed.points, pieces, anchors, other, other_anchors, radius)
            assert np.array_equal(np.flatnonzero(in_round), np.unique(p_idx))
            assert np.array_equal(np.flatnonzero(in_flat), np.unique(p_idx[flat]))
            inside_other += int(in_round.sum())
    assert inside_other > 4000  # the jittered twins overlap: real answers were compared, not only empty ones


def test_registry_lists_every_metric_with_a_direction():
    names = get_metric_names()
    assert names[:6] == ["corner_precision", "corner_recall", "corner_f1", "edge_precision", "edge_recall", "edge_f1"]
    assert {"wed", "wed_prereg", "wed_mnn", "edge_chamfer", "edge_hausdorff", "jaccard_distance", "spectral"} <= set(
        names
    )
    assert METRICS["corner_f1"].direction is Direction.HIGHER_IS_BETTER
    assert METRICS["wed"].direction is Direction.LOWER_IS_BETTER
    assert METRICS["edge_f1"](SPLIT_SQUARE, SQUARE) == pytest.approx(2 / 3)
    assert evaluate_all(SPLIT_SQUARE, SQUARE, ["wed_mnn"]) == {"wed_mnn": pytest.approx(0.5625)}
    with pytest.raises(ValueError, match="'bogus'"):
        evaluate_all(SQUARE, SQUARE, ["bogus"])


def test_new_variants_define_empty_and_degenerate_inputs():
    names = ["corner_offset", "wed_nearest", "wed_ap", "wed_s23dr", "edge_emd", "spectral_l1", "jaccard_distance_flat"]
    both = evaluate_all(EMPTY, EMPTY, names)
    assert both == {n: 0.0 for n in names}
    pred_empty = evaluate_all(EMPTY, SQUARE, names)
    assert pred_empty["edge_emd"] == 1.0 and pred_empty["jaccard_distance_flat"] == 1.0
    assert pred_empty["corner_offset"] == 0.02 and pred_empty["spectral_l1"] == pytest.approx(2.0)
    assert pred_empty["wed_nearest"] == pred_empty["wed_ap"] == pytest.approx((4 * 0.5 + 4.0) / 4)
    # S23DR: inserting 4 vertices at half the GT diameter (sqrt 2) each, and 4 unit edges
    assert pred_empty["wed_s23dr"] == pytest.approx((4 * 0.5 * math.sqrt(2) + 4.0) / 4)
    gt_empty = evaluate_all(SQUARE, EMPTY, names)
    assert gt_empty["wed_s23dr"] == pytest.approx(4.0)  # a GT without extent: vertex costs 0, edges deleted
    assert all(math.isfinite(v) for v in gt_empty.values())
    point = Wireframe([[0.5, 0.5, 0]], np.zeros((0, 2)))  # a lone vertex: no edge geometry at all
    lone = evaluate_all(point, SQUARE, names)
    assert lone["edge_emd"] == 1.0 and lone["corner_offset"] == 0.02
    assert all(math.isfinite(v) for v in lone.values())


def test_corner_offset_grows_as_a_vertex_moves_away_through_and_past_the_threshold():
    """The paper's monotonic (moving vertex) property on a purpose-built square: ACO forgets the vertex once
    it is past the threshold (back to 0), the offset keeps it at the threshold."""
    steps = [0.0, 0.005, 0.01, 0.015, 0.019, 0.021, 0.05]
    moved = [Wireframe(SQUARE.vertices + [[d, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]], SQUARE.edges) for d in steps]
    offset = [corner_prf(w, SQUARE, threshold=0.02)["offset"] for w in moved]
    aco = [corner_prf(w, SQUARE, threshold=0.02)["offset_matched"] for w in moved]
    assert np.all(np.diff(offset[:6]) > 0) and offset[5] == offset[6] == pytest.approx(0.02 / 4)
    assert aco[4] == pytest.approx(0.019 / 4) and aco[5] == 0.0  # ACO drops once the vertex is unmatched
    # one more vertex moved past the threshold, or deleted, costs one more threshold share
    two = Wireframe(SQUARE.vertices + [[0.05, 0, 0], [0, 0.05, 0], [0, 0, 0], [0, 0, 0]], SQUARE.edges)
    assert corner_prf(two, SQUARE, threshold=0.02)["offset"] == pytest.approx(2 * 0.02 / 4)
    three = Wireframe(SQUARE.vertices[:3], np.zeros((0, 2)))
    assert corner_prf(three, SQUARE, threshold=0.02)["offset"] == pytest.approx(0.02 / 4)
