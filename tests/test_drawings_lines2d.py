"""2D line geometry behind the drawings: conic sampling, straightening, hidden-under-visible trimming."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spare_gen.cad.cover2d import subtract_intervals, uncovered_arcs, uncovered_segments
from spare_gen.cad.lines2d import ConicSpec, chain_segments, conic_steps, drop_points_and_repeats, evaluate_conics, straighten


def circle(r, first, last, cx=0.0, cy=0.0, phase=0.0, sense=1, tol=1e-3) -> ConicSpec:
    x = (math.cos(phase), math.sin(phase))
    y = (-sense * math.sin(phase), sense * math.cos(phase))
    return ConicSpec(cx, cy, r * x[0], r * x[1], r * y[0], r * y[1], first, last, conic_steps(r, last - first, tol))


def test_conic_samples_stay_within_tolerance():
    tol = 1e-3
    spec = ConicSpec(1.0, 2.0, 3.0, 0.0, 0.0, 1.0, 0.0, math.pi, conic_steps(3.0, math.pi, tol))  # ellipse 3 x 1
    pts = evaluate_conics([spec])[0]
    np.testing.assert_allclose(((pts[:, 0] - 1) / 3) ** 2 + (pts[:, 1] - 2) ** 2, 1.0, atol=1e-12)  # on the curve
    mid = (pts[1:] + pts[:-1]) / 2  # chord midpoints: worst deviation
    t = np.arctan2(mid[:, 1] - 2, (mid[:, 0] - 1) / 3)
    dev = np.hypot(mid[:, 0] - 1 - 3 * np.cos(t), mid[:, 1] - 2 - np.sin(t))
    assert dev.max() <= tol
    np.testing.assert_allclose(pts[[0, -1]], [[4, 2], [-2, 2]], atol=1e-12)


def test_straighten_flat_curves_only():
    out_and_back = np.array([[0, 0], [2, 1e-12], [4, 0], [1, -1e-12]], float)  # a circle seen edge-on
    bent = np.array([[0, 0], [1, 0.1], [2, 0]], float)
    lines = straighten([out_and_back, bent, np.array([[0, 0], [1, 1]], float)], 1e-9)
    np.testing.assert_allclose(lines[0], [[0, 0], [4, 0]], atol=1e-9)
    assert lines[1] is bent and len(lines[2]) == 2


def test_hidden_segment_loses_the_part_under_a_visible_one():
    hidden = np.array([[[0, 0], [10, 0]], [[0, 1], [10, 1]]], float)
    visible = np.array([[[2, 0], [5, 0]], [[4, 0], [6, 0]], [[0, 1.5], [10, 1.5]]], float)
    pieces = uncovered_segments(hidden, visible, eps=1e-6, min_len=1e-3)
    np.testing.assert_allclose(np.array(pieces[0])[:, :, 0], [[0, 2], [6, 10]], atol=1e-5)
    np.testing.assert_allclose(pieces[1][0], hidden[1])  # parallel but 0.5 away: kept whole
    assert uncovered_segments(hidden[:1], np.array([[[-1, 0], [11, 0]]], float), 1e-6, 1e-3) == [[]]


def test_hidden_arc_under_a_visible_arc_of_the_same_circle():
    hidden = circle(2.0, 0.0, 2 * math.pi)
    # the same circle, parametrised from another start and the other way round, covering a quarter
    visible = circle(2.0, 0.0, math.pi / 2, phase=math.pi, sense=-1)
    left = uncovered_arcs(hidden, [visible], eps=1e-9, min_len=1e-6)
    covered_mid = evaluate_conics([visible])[0][len(evaluate_conics([visible])[0]) // 2]
    rest = np.concatenate(evaluate_conics(left))
    assert np.hypot(*(rest - covered_mid).T).min() > 0.5  # the covered quarter is gone
    assert sum(a.last - a.first for a in left) == pytest.approx(1.5 * math.pi, abs=1e-6)
    assert uncovered_arcs(hidden, [circle(2.0, 0.0, 2 * math.pi, phase=1.0)], 1e-9, 1e-6) == []
    assert uncovered_arcs(hidden, [circle(2.1, 0.0, 2 * math.pi)], 1e-9, 1e-6) == [hidden]  # other circle


def test_subtract_intervals():
    assert subtract_intervals(0, 10, [(2, 3), (2.5, 4), (8, 12)], 0.1) == [(0, 2), (4, 8)]
    assert subtract_intervals(0, 1, [(0.95, 1.0)], 0.1) == [(0, 0.95)]
    assert subtract_intervals(0, 1, [(0.02, 1.0)], 0.1) == []  # the 0.02 sliver is dropped


def test_drop_points_and_repeats_per_group():
    a = np.array([[0, 0], [1, 0]], float)
    lines = [a, a[::-1].copy(), np.array([[5, 5], [5, 5 + 1e-9]]), a.copy()]
    assert drop_points_and_repeats(lines, 1e-6, [0, 0, 0, 1]) == [0, 3]


def test_chain_segments_joins_shared_ends():
    segs = [((1.0, 0.0), (2.0, 0.0)), ((0.0, 0.0), (1.0, 0.0)), ((5.0, 5.0), (6.0, 6.0))]
    chains = chain_segments(segs)
    np.testing.assert_allclose(chains[0], [[0, 0], [1, 0], [2, 0]])
    assert len(chains) == 2
