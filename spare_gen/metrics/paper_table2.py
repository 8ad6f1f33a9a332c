"""The ICCV 2025 metrics paper's Table 2 (share of 128 GT wireframes passing each property test), per metric.

Printed beside our report's cells so a reader sees where a faithful reimplementation agrees with the paper;
every cell whose verdict differs carries a diagnosis (:data:`DIAGNOSES`, :data:`PAPER_COMPAT_DIAGNOSES` under
``--paper-compat``: cause, one line, and the test that shows it), attached to that exact (test, metric) cell and
printed by the report. Columns map onto our registry names (under ``--paper-compat`` onto the variants of
:data:`PAPER_VARIANTS`); the paper has no plain (Hungarian, unregistered) WED column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd

#: Paper column -> our metric name, in the paper's order.
PAPER_COLUMNS = {
    "Corner Prec": "corner_precision",
    "Corner Rec": "corner_recall",
    "Corner F1": "corner_f1",
    "Corner offset": "corner_offset",
    "Edge Prec": "edge_precision",
    "Edge Rec": "edge_recall",
    "Edge F1": "edge_f1",
    "WED prereg": "wed_prereg",
    "WED MNN": "wed_mnn",
    "WED nearest": "wed_nearest",
    "WED AP": "wed_ap",
    "Spectral L1": "spectral_l1",
    "Spectral L2": "spectral",
    "IoU Jaccard": "jaccard_distance",
    "Hausdorff dist.": "edge_hausdorff",
    "Chamfer edge": "edge_chamfer",
}

_ROWS = {
    "Monotonic (wrong edges)": "0.02 0.01 0.02 1.00 1.00 0.00 1.00 0.00 0.00 0.00 0.98 0.63 0.14 0.01 0.09 0.00",
    "Monotonic (deform/split)": "1.00 0.86 1.00 0.65 1.00 0.98 1.00 0.74 0.79 0.67 0.60 0.00 0.06 0.16 0.05 0.40",
    "Monotonic (moving vertex)": "1.00 1.00 1.00 0.98 1.00 1.00 1.00 0.99 1.00 0.99 1.00 0.99 0.99 0.45 0.99 1.00",
    "Monotonic (disconnect edges)": "0.52 0.00 0.50 0.31 0.00 0.00 0.00 0.26 1.00 1.00 1.00 0.00 0.01 1.00 0.00 0.02",
    "Monotonic (delete vertices)": "0.00 1.00 1.00 1.00 0.00 1.00 1.00 0.75 1.00 1.00 1.00 0.90 0.33 0.67 0.14 0.99",
    "Monotonic (delete edges)": "0.00 0.00 0.00 1.00 0.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 0.31 1.00 0.07 0.83",
    "Identity of indiscernibles": "1.00 1.00 1.00 1.00 1.00 1.00 1.00 0.02 1.00 1.00 1.00 1.00 1.00 1.00 0.00 0.00",
    "Near identity of indiscernibles": "1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 0.00 0.00",
    "Symmetry (0 mean, weighted)": "1.00 1.00 1.00 0.88 1.00 1.00 1.00 0.44 0.44 0.44 0.44 0.44 0.90 1.00 0.84 1.00",
    "Near symmetry (0 mean, weighted)": "1.00 1.00 1.00 0.87 1.00 1.00 1.00 0.58 0.54 0.54 0.45 0.90 0.92 1.00 1.00 1.00",
    "Symmetry (shift, weighted)": "1.00 1.00 1.00 1.00 1.00 1.00 1.00 0.88 0.99 0.92 0.98 0.99 1.00 1.00 0.82 1.00",
    "Near symmetry (shift, weighted)": "1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 0.92 0.99 1.00 1.00 1.00 1.00 1.00",
    "Quasi-proportionality (shift, far)": "0.00 0.00 0.00 0.00 0.00 0.00 0.00 1.00 0.00 0.00 0.00 1.00 0.72 0.05 0.00 0.00",
    "Quasi-proportionality (shift, close)": "0.00 0.00 0.00 0.00 0.00 0.00 0.00 1.00 0.16 0.16 0.91 1.00 0.72 0.06 0.00 0.00",
    "Triangle ineq. (rand other)": "0.99 1.00 1.00 1.00 1.00 0.98 1.00 1.00 1.00 0.99 0.95 0.92 0.97 1.00 1.00 0.96",
    "Triangle ineq. (add noise)": "1.00 1.00 1.00 0.91 1.00 1.00 1.00 0.84 0.81 0.83 1.00 0.90 0.69 1.00 1.00 1.00",
    "Triangle ineq. (del1/del2)": "1.00 1.00 1.00 1.00 1.00 1.00 1.00 0.90 0.98 0.98 1.00 1.00 0.66 1.00 1.00 0.43",
}

#: test -> metric -> the paper's pass rate.
PAPER_RATES: dict[str, dict[str, float]] = {
    test: dict(zip(PAPER_COLUMNS.values(), (float(v) for v in values.split())))
    for test, values in _ROWS.items()
}

class Cause(str, Enum):
    """Why a cell's verdict differs from the paper's, by kind; each is shown by an experiment (a test) that
    fails when the cause stops reproducing."""

    PROTOCOL = "paper protocol"  # the other mode (the paper's protocol, or ours) runs the cell its way and agrees
    DATA = "data"  # the paper's GT are houses, ours CSG/CAD parts; the house pool agrees
    SCHEDULE = "schedule"  # under a paper-like perturbation schedule the cell agrees with the paper
    METRIC = "paper metric"  # a variant of the metric (the paper's implementation as its numbers show) agrees
    DEFINITION = "paper's definition"  # the metric as the paper's text defines it provably has (or lacks) the
    # property: a test shows it; the paper's rate cannot come from that definition and no variant is known


@dataclass(frozen=True)
class Diagnosis:
    """One line of cause and the experiment (a test name) that shows it."""

    cause: Cause
    why: str
    experiment: str

    def line(self) -> str:
        return f"{self.cause.value}: {self.why} (experiment: {self.experiment})"


UNEXPLAINED = "not explained yet"

_T = "tests/test_paper_table2.py::"


def _cells(diagnosis: Diagnosis, test: str, *metrics: str) -> dict[tuple[str, str], Diagnosis]:
    """The diagnosis of each named (test, metric) cell: one exact cell per metric, never a name prefix."""
    return {(test, m): diagnosis for m in metrics}


_WEDS = ("wed_prereg", "wed_mnn", "wed_nearest", "wed_ap")
_vertex_only = Diagnosis(Cause.DEFINITION, "a score of the vertices alone cannot change when only edges do (the "
                         "paper's own corner P/R/F1 fail this row); the paper's 1.00 needs an offset that reads "
                         "edges", _T + "test_vertex_only_metrics_cannot_see_wrong_or_deleted_edges")
_wrong = Diagnosis(Cause.DEFINITION, "each wrong edge is an edge the WED deletes at its length, cylinder volume "
                   "outside the GT's and a positive weight in the Laplacian, so the metric as defined rises at every "
                   "step", _T + "test_every_wed_spectrum_and_cylinder_iou_rises_with_each_wrong_edge")
_collinear = Diagnosis(Cause.SCHEDULE, "our split pushes the new vertex 0.05 off the edge; split collinearly, as the "
                       "paper's Figure 1 (--paper-compat), the edge's points and cylinders stay where they were and no step "
                       "shows",
                       _T + "test_collinear_splits_leave_the_chamfer_and_the_cylinder_iou_unchanged")
_random_samples = Diagnosis(Cause.PROTOCOL, "the paper samples the edges at random, so two samplings of one "
                            "wireframe differ; ours are deterministic (--paper-compat samples at random and agrees)",
                            _T + "test_under_the_paper_protocol_identity_is_d_x_x_and_round_off_or_random_samples_fail_it")
_sampling_noise = Diagnosis(Cause.PROTOCOL, "random edge samples add noise to every chamfer value, larger than what "
                            "one small break or deleted edge adds, so a step can look like a fall (--paper-compat "
                            "samples at random and agrees)",
                            _T + "test_random_samples_hide_steps_the_deterministic_chamfer_sees")
_round_off = Diagnosis(Cause.PROTOCOL, "the paper checks d(x, x) == 0 exactly, which pre-registration's "
                       "(x - mean) / s * s + mean misses by round-off; ours allows 1e-9 on a relabelled copy "
                       "(--paper-compat agrees)",
                       _T + "test_under_the_paper_protocol_identity_is_d_x_x_and_round_off_or_random_samples_fail_it")
_pure_shift = Diagnosis(Cause.PROTOCOL, "our shift rows add the noise too, which changes the GT length that divides "
                        "the WED; the paper's translate only, keeping every length (--paper-compat agrees)",
                        _T + "test_a_pure_shift_keeps_the_weds_symmetric_where_our_noisy_shift_does_not")
_symmetric = Diagnosis(Cause.DEFINITION, "the metric as defined is symmetric (a test swaps the arguments); the "
                       "paper's value says its implementation was not",
                       _T + "test_the_corner_offset_and_spectral_distances_are_symmetric_and_blind_to_a_shift")
_shift_blind = Diagnosis(Cause.DEFINITION, "a translation leaves every edge length and so the spectrum unchanged: "
                         "every difference is 0, which the test counts as proportional",
                         _T + "test_the_corner_offset_and_spectral_distances_are_symmetric_and_blind_to_a_shift")
_normalised = Diagnosis(Cause.METRIC, "the paper's Spectral L2 behaves like W2 between the normalised Laplacians' "
                        "spectra (spectral_normalised), which do not follow a break or a deleted edge step by step "
                        "(--paper-compat compares it and agrees)",
                        _T + "test_the_normalised_spectrum_misses_steps_that_the_length_weighted_one_follows")
_padded = Diagnosis(Cause.METRIC, "W1 compares the spectra as distributions, so a vertex fewer re-weights every "
                    "eigenvalue; the paper's L1 rises like the zero-padded L1 (spectral_l1_padded; --paper-compat "
                    "compares it and agrees)",
                    _T + "test_the_zero_padded_spectral_l1_rises_with_each_deleted_vertex_where_w1_does_not")
_squared = Diagnosis(Cause.METRIC, "W2 between spectra is a metric and keeps the triangle inequality; a squared "
                     "distance breaks it as the paper's L2 does (its L1 passes)",
                     _T + "test_the_squared_spectral_distance_breaks_the_triangle_inequality_the_w2_distance_keeps")
_ap_radius = Diagnosis(Cause.METRIC, "the close shift (10 x 0.003) crosses our 0.02 match radius and the WED jumps; "
                       "with a radius past 0.03 (Building3D's is in metres) it stays proportional",
                       _T + "test_the_threshold_wed_follows_a_close_shift_proportionally_only_with_a_radius_beyond_the_shift")
_house_edges = Diagnosis(Cause.DATA, "on parts some deleted edges (short curve pieces, overlapping features) hide "
                         "inside their neighbours' cylinders; on house wireframes every deletion shows",
                         _T + "test_a_short_edge_inside_its_neighbours_cylinders_is_deleted_unseen")

#: Our default metric -> the variant that behaves like the paper's implementation where its numbers show one
#: other than its text; ``--paper-compat`` compares the variant with the paper's column instead.
PAPER_VARIANTS = {"spectral_l1": "spectral_l1_padded", "spectral": "spectral_normalised"}


#: Diagnoses that hold in both modes, by exact (test, metric) cell under our metric names (under
#: ``--paper-compat`` a metric of :data:`PAPER_VARIANTS` stands for its variant).
_BOTH_MODES: dict[tuple[str, str], Diagnosis] = {
    **_cells(_vertex_only, "Monotonic (wrong edges)", "corner_offset"),
    **_cells(_wrong, "Monotonic (wrong edges)", "wed_prereg", "wed_mnn", "wed_nearest", "jaccard_distance",
             "spectral_l1"),
    **_cells(_vertex_only, "Monotonic (delete edges)", "corner_offset"),
    **_cells(_house_edges, "Monotonic (delete edges)", "jaccard_distance"),
    **_cells(_symmetric, "Symmetry (0 mean, weighted)", "corner_offset", "spectral_l1"),
    **_cells(_symmetric, "Near symmetry (0 mean, weighted)", "corner_offset"),
    **_cells(_shift_blind, "Quasi-proportionality (shift, far)", "spectral"),
    **_cells(_shift_blind, "Quasi-proportionality (shift, close)", "spectral"),
    **_cells(_ap_radius, "Quasi-proportionality (shift, close)", "wed_ap"),
    **_cells(_squared, "Triangle ineq. (add noise)", "spectral"),
    **_cells(_squared, "Triangle ineq. (del1/del2)", "spectral"),
}

#: Diagnoses of the cells that differ under our protocol (the default), by exact (test, metric) cell.
DIAGNOSES: dict[tuple[str, str], Diagnosis] = {
    **_BOTH_MODES,
    **_cells(_normalised, "Monotonic (wrong edges)", "spectral"),
    **_cells(_collinear, "Monotonic (deform/split)", "jaccard_distance"),
    **_cells(_sampling_noise, "Monotonic (deform/split)", "edge_chamfer"),
    **_cells(_normalised, "Monotonic (deform/split)", "spectral"),
    **_cells(_sampling_noise, "Monotonic (disconnect edges)", "edge_chamfer"),
    **_cells(_normalised, "Monotonic (disconnect edges)", "spectral"),
    **_cells(_padded, "Monotonic (delete vertices)", "spectral_l1"),
    **_cells(_sampling_noise, "Monotonic (delete edges)", "edge_chamfer"),
    **_cells(_normalised, "Monotonic (delete edges)", "spectral"),
    **_cells(_round_off, "Identity of indiscernibles", "wed_prereg"),
    **_cells(_random_samples, "Identity of indiscernibles", "edge_chamfer", "edge_hausdorff"),
    **_cells(_random_samples, "Near identity of indiscernibles", "edge_chamfer", "edge_hausdorff"),
    **_cells(_pure_shift, "Symmetry (shift, weighted)", "wed_mnn", "wed_ap"),
    **_cells(_pure_shift, "Near symmetry (shift, weighted)", *_WEDS),
    **_cells(_random_samples, "Quasi-proportionality (shift, close)", "edge_hausdorff"),
}

_fixed_samples = Diagnosis(Cause.PROTOCOL, "random samples drawn afresh for each call make a chamfer step look like "
                           "a fall; the deterministic default passes",
                           _T + "test_random_samples_add_noise_larger_than_what_deleting_a_short_edge_adds_to_the_chamfer")

#: Diagnoses of the cells that differ under the paper's protocol (``--paper-compat``), by exact cell.
PAPER_COMPAT_DIAGNOSES: dict[tuple[str, str], Diagnosis] = {
    **{(test, PAPER_VARIANTS.get(metric, metric)): found for (test, metric), found in _BOTH_MODES.items()},
    **_cells(_fixed_samples, "Monotonic (delete vertices)", "edge_chamfer"),
}


def paper_column_metric(metric: str, paper_compat: bool = False) -> str | None:
    """The metric name whose paper column this metric is compared with (None: not compared in this mode)."""
    if not paper_compat:
        return metric
    if metric in PAPER_VARIANTS:
        return None
    return {v: k for k, v in PAPER_VARIANTS.items()}.get(metric, metric)


def paper_rate(test: str, metric: str, paper_compat: bool = False) -> float:
    """The paper's pass rate for this cell, NaN when the paper has no such column or row (or, under
    ``paper_compat``, when a variant of this metric stands for its column)."""
    column = paper_column_metric(metric, paper_compat)
    return math.nan if column is None else PAPER_RATES.get(test, {}).get(column, math.nan)


def diagnose(test: str, metric: str, paper_compat: bool = False) -> Diagnosis | None:
    """The diagnosis of exactly this cell's differing verdict in this mode, None when there is none."""
    return (PAPER_COMPAT_DIAGNOSES if paper_compat else DIAGNOSES).get((test, metric))


def difference_reason(test: str, metric: str, paper_compat: bool = False) -> str:
    """The diagnosis of a differing verdict as one line, or 'not explained yet'."""
    found = diagnose(test, metric, paper_compat)
    return found.line() if found is not None else UNEXPLAINED


def differing_cells(
    rates: pd.DataFrame, threshold: float, paper_compat: bool = False
) -> list[tuple[str, str, float, float]]:
    """(test, metric, ours, paper) of every cell whose verdict (rate >= threshold) differs from the paper's."""
    out = []
    for test, row in rates.iterrows():
        for metric, ours in row.items():
            paper = paper_rate(str(test), str(metric), paper_compat)
            if not (np.isnan(paper) or pd.isna(ours)) and (paper >= threshold) != (float(ours) >= threshold):
                out.append((str(test), str(metric), float(ours), paper))
    return out


def unexplained_cells(
    rates: pd.DataFrame, threshold: float, paper_compat: bool = False
) -> list[tuple[str, str, float, float]]:
    """The differing cells (:func:`differing_cells`) that have no diagnosis."""
    return [c for c in differing_cells(rates, threshold, paper_compat) if diagnose(c[0], c[1], paper_compat) is None]
