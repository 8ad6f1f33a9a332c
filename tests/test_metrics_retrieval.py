"""SHREC 2018 retrieval metrics against hand-computed rankings."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from spare_gen.metrics.retrieval import (
    cumulated_gain,
    discounted_cumulated_gain,
    e_measure,
    f_measure,
    first_tier,
    mean_average_precision,
    nearest_neighbor,
    normalized_dcg,
    precision_recall_curve,
    retrieval_report,
    second_tier,
)
from spare_gen.rng import derive_rng

W3, W4, W5 = 1 / math.log2(3), 1 / math.log2(4), 1 / math.log2(5)  # DCG discounts of ranks 3, 4, 5


def distances_from_relevance(labels: np.ndarray, patterns: dict[int, list[int]]) -> np.ndarray:
    """Square matrix whose ranked list for query q (self excluded) has relevance ``patterns[q]``."""
    n = len(labels)
    d = np.zeros((n, n))
    for q, pattern in patterns.items():
        others = [j for j in range(n) if j != q]
        relevant = [j for j in others if labels[j] == labels[q]]
        irrelevant = [j for j in others if labels[j] != labels[q]]
        order = [relevant.pop(0) if g else irrelevant.pop(0) for g in pattern]
        d[q, order] = np.arange(1, len(order) + 1)
    return d


# 2 classes x 3 items; each query ranks the 5 others (self excluded), n_rel = 2.
HAND_LABELS = np.array([0, 0, 0, 1, 1, 1])
HAND_PATTERNS = {
    0: [1, 0, 1, 0, 0],
    1: [0, 1, 1, 0, 0],
    2: [1, 1, 0, 0, 0],
    3: [0, 0, 0, 1, 1],
    4: [1, 0, 0, 0, 1],
    5: [1, 1, 0, 0, 0],
}


@pytest.fixture(scope="module")
def hand():
    d = distances_from_relevance(HAND_LABELS, HAND_PATTERNS)
    return d, retrieval_report(d, HAND_LABELS)


def test_hand_ranking_nn_tiers_map(hand):
    _, r = hand
    # NN: ranks-1 relevance 1,0,1,0,1,1 -> 4/6
    assert r["nn"] == pytest.approx(4 / 6)
    # FT (K = |C|-1 = 2): 1/2, 1/2, 1, 0, 1/2, 1 -> 3.5/6
    assert r["ft"] == pytest.approx(3.5 / 6)
    # ST (K = 4): 1, 1, 1, 1/2, 1/2, 1 -> 5/6
    assert r["st"] == pytest.approx(5 / 6)
    # AP: (1+2/3)/2, (1/2+2/3)/2, 1, (1/4+2/5)/2, (1+2/5)/2, 1 = 100,70,120,39,84,120 /120 -> 533/720
    assert r["map"] == pytest.approx(533 / 720)
    assert r["n_queries"] == 6 and r["n_queries_skipped"] == 0


def test_hand_ranking_gain_measures(hand):
    _, r = hand
    # DCG[i] = DCG[i-1] + G[i]/log2(i); ideal (2 relevant) = 1 + 1 = 2
    dcg = [1 + W3, 1 + W3, 2, W4 + W5, 1 + W5, 2]
    assert r["dcg"] == pytest.approx(np.mean(dcg))
    assert r["ndcg"] == pytest.approx(np.mean(dcg) / 2)
    # CG per rank, averaged: rank 1 has 4 hits of 6, rank 2: 1+1+2+0+1+2 = 7 of 6, ...
    np.testing.assert_allclose(r["cg_curve"], [4 / 6, 7 / 6, 9 / 6, 10 / 6, 2.0])
    # DCG at rank 2 (weight 1) = CG at rank 2; rank 3 adds (q0 + q1) * 1/log2(3)
    np.testing.assert_allclose(r["dcg_curve"][:3], [4 / 6, 7 / 6, 7 / 6 + 2 * W3 / 6])
    # ideal DCG per rank: 1, 2, 2, 2, 2
    np.testing.assert_allclose(r["ndcg_curve"], r["dcg_curve"] / np.array([1, 2, 2, 2, 2]))


def test_hand_ranking_pr_and_f_measures(hand):
    d, r = hand
    # interpolated precision, recall <= 0.5: max(P) over all ranks = 1, 2/3, 1, 2/5, 1, 1;
    # recall > 0.5: max P from the 2nd hit on = 2/3, 2/3, 1, 2/5, 2/5, 1
    low, high = (1 + 2 / 3 + 1 + 0.4 + 1 + 1) / 6, (2 / 3 * 2 + 1 + 0.8 + 1) / 6
    expected = np.where(np.linspace(0, 1, 11) <= 0.5, low, high)
    np.testing.assert_allclose(r["pr_recall"], np.linspace(0, 1, 11))
    np.testing.assert_allclose(r["pr_precision"], expected)
    # only 5 targets < 32: P = 2/5, R = 1 for every query -> F = 2 * 0.4 / 1.4
    assert r["f_measure"] == pytest.approx(0.8 / 1.4)
    assert r["e_measure"] == pytest.approx(1 - 0.8 / 1.4)
    # at depth 2 = n_rel, P = R = FT, so F = FT
    assert f_measure(d, HAND_LABELS, depth=2) == pytest.approx(3.5 / 6)
    # F_beta weights recall beta times as much as precision: depth 1 -> P = NN, R = NN/2 per query
    # beta = 2: 5 * P * R / (4P + R) = 5 * (1/2) / (4.5) per hit query -> 4 hits of 6
    assert f_measure(d, HAND_LABELS, depth=1, beta=2.0) == pytest.approx(4 / 6 * 2.5 / 4.5)


def test_single_metric_functions_match_report(hand):
    d, r = hand
    assert nearest_neighbor(d, HAND_LABELS) == pytest.approx(r["nn"])
    assert first_tier(d, HAND_LABELS) == pytest.approx(r["ft"])
    assert second_tier(d, HAND_LABELS) == pytest.approx(r["st"])
    assert mean_average_precision(d, HAND_LABELS) == pytest.approx(r["map"])
    assert normalized_dcg(d, HAND_LABELS) == pytest.approx(r["ndcg"])
    assert e_measure(d, HAND_LABELS) == pytest.approx(r["e_measure"])
    np.testing.assert_allclose(cumulated_gain(d, HAND_LABELS), r["cg_curve"])
    np.testing.assert_allclose(discounted_cumulated_gain(d, HAND_LABELS), r["dcg_curve"])
    levels, precision = precision_recall_curve(d, HAND_LABELS, recall_levels=[0.0, 0.5, 0.51, 1.0])
    np.testing.assert_allclose(precision, r["pr_precision"][[0, 5, 6, 10]])


def test_perfect_ranking_scores_one():
    labels = np.repeat([0, 1, 2], 4)
    points = labels[:, None] * 100.0 + derive_rng(0, "perfect").normal(size=(12, 2))
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    r = retrieval_report(d, labels)
    for name in ("nn", "ft", "st", "map", "ndcg"):
        assert r[name] == pytest.approx(1.0), name
    np.testing.assert_allclose(r["pr_precision"], 1.0)
    # 11 targets < 32: P = 3/11, R = 1 -> F = 2 * (3/11) / (14/11) = 3/7
    assert r["f_measure"] == pytest.approx(3 / 7)


def test_ties_broken_by_target_index():
    labels = np.array([0, 0, 1, 1, 1])
    r = retrieval_report(np.zeros((5, 5)), labels)
    # lists in index order (self removed): q0 [1,2,3,4] rel 1000; q1 [0,2,3,4] 1000;
    # q2 [0,1,3,4] 0011; q3 [0,1,2,4] 0011; q4 [0,1,2,3] 0011 (descending order would give NN 3/5)
    assert r["nn"] == pytest.approx(2 / 5)
    assert r["map"] == pytest.approx((1 + 1 + 3 * (1 / 3 + 2 / 4) / 2) / 5)


def test_recall_levels_are_met_exactly_despite_rounding():
    # one query, 10 relevant targets ranked: 3 relevant, 7 irrelevant, 7 relevant
    relevance = np.array([1] * 3 + [0] * 7 + [1] * 7)
    d = np.arange(len(relevance), dtype=float)[None, :]
    _, precision = precision_recall_curve(d, ["a"], np.where(relevance == 1, "a", "b"))
    # level 0.30000000000000004 * 10 must still mean 3 hits: precision 1 at rank 3
    assert precision[3] == pytest.approx(1.0)
    # level 0.4 needs 4 hits: best precision from rank 11 on is 10/17 (the last hit)
    assert precision[4] == pytest.approx(10 / 17)


def test_cross_set_queries_use_whole_class_as_first_tier():
    target_labels = np.array(["a", "a", "b", "b"])
    query_labels = np.array(["a", "b"])
    d = np.array([[0.1, 0.5, 0.3, 0.9], [0.1, 0.2, 0.3, 0.4]])
    r = retrieval_report(d, query_labels, target_labels)  # exclude_self defaults to False here
    # q0 ranks 0,2,1,3 -> rel 1010; q1 ranks 0,1,2,3 -> rel 0011; K = |C| = 2 for FT, 4 for ST
    assert r["nn"] == pytest.approx(0.5)
    assert r["ft"] == pytest.approx((0.5 + 0) / 2)
    assert r["st"] == pytest.approx(1.0)
    assert r["map"] == pytest.approx(((1 + 2 / 3) / 2 + (1 / 3 + 2 / 4) / 2) / 2)


def test_query_without_relevant_target_is_skipped():
    labels = np.array([0, 0, 1])  # class 1 has one member: nothing relevant once self is excluded
    d = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    r = retrieval_report(d, labels)
    # q0 and q1 both rank the class-1 item first, their partner second -> NN 0, AP 1/2
    assert r["n_queries"] == 2 and r["n_queries_skipped"] == 1
    assert r["nn"] == 0.0
    assert r["map"] == pytest.approx(0.5)


def test_map_matches_sklearn_and_chunking_does_not_matter():
    rng = derive_rng(0, "retrieval", "random")
    labels = rng.integers(0, 7, 300)
    points = rng.normal(size=(300, 5)) + labels[:, None] * 0.4
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    off_diagonal = ~np.eye(300, dtype=bool)
    expected = np.mean(
        [
            average_precision_score(labels[off_diagonal[q]] == labels[q], -d[q, off_diagonal[q]])
            for q in range(300)
        ]
    )
    whole = retrieval_report(d, labels)
    chunked = retrieval_report(d, labels, chunk_size=7)
    assert whole["map"] == pytest.approx(expected)
    for name in ("nn", "ft", "st", "map", "ndcg", "f_measure", "dcg"):
        assert chunked[name] == pytest.approx(whole[name]), name
    np.testing.assert_allclose(chunked["pr_precision"], whole["pr_precision"])
    assert 0.0 < whole["map"] < 1.0


def test_invalid_inputs_raise():
    labels = np.array([0, 0, 1])
    with pytest.raises(ValueError, match="NaN"):
        retrieval_report(np.full((3, 3), np.nan), labels)
    with pytest.raises(ValueError, match="square"):
        retrieval_report(np.zeros((3, 2)), labels, np.array([0, 1]), exclude_self=True)
    with pytest.raises(ValueError, match="does not match"):
        retrieval_report(np.zeros((3, 3)), labels[:2])
    with pytest.raises(ValueError, match="recall levels"):
        precision_recall_curve(np.zeros((3, 3)), labels, recall_levels=[1.5])
