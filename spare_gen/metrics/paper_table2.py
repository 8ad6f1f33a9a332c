"""The ICCV 2025 metrics paper's Table 2 (share of 128 GT wireframes passing each property test), per metric.

Printed beside our report's cells so a reader sees where a faithful reimplementation agrees with the paper;
every cell whose verdict differs carries a diagnosis (:data:`DIAGNOSES`: cause, one line, and the experiment
that shows it), printed by the report. Columns map onto our registry names; the paper has no plain
(Hungarian, unregistered) WED column.
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
    """Why a cell's verdict differs from the paper's, by kind."""

    PROTOCOL = "paper protocol"  # the paper tested differently; ``--paper-compat`` runs its way and agrees
    DATA = "data"  # the paper's GT are houses, ours CSG/CAD parts; the house pool agrees
    SCHEDULE = "schedule"  # our perturbations are built so the property can be seen; the paper's were not
    METRIC = "paper metric"  # the paper's metric behaves unlike its own definition; a test shows ours does


@dataclass(frozen=True)
class Diagnosis:
    """One line of cause and the experiment (a test name or a command) that shows it."""

    cause: Cause
    why: str
    experiment: str

    def line(self) -> str:
        return f"{self.cause.value}: {self.why} (experiment: {self.experiment})"


UNEXPLAINED = "not explained yet"

_T = "tests/test_paper_table2.py::"
_HOUSES = "spare-gen pool -c configs/houses_pool.toml --out H && spare-gen metric-report H --models 32"
_PROTO_IDENTITY = _T + "test_under_the_paper_protocol_identity_is_d_x_x_and_round_off_or_random_samples_fail_it"
_PROTO_SYMMETRY = _T + "test_under_the_paper_protocol_the_gt_length_normalised_weds_are_not_symmetric"
_EDGE_ONLY = _T + "test_vertex_only_metrics_cannot_see_wrong_or_deleted_edges"
_WRONG = _T + "test_every_wed_spectrum_and_cylinder_iou_rises_with_each_wrong_edge"
_DEFORM = _T + "test_each_deform_split_step_is_seen_by_the_offset_weds_chamfer_iou_and_spectra"
_DISCONNECT = _T + "test_each_disconnect_step_is_seen_by_the_corners_prereg_wed_chamfer_and_spectra"
_VERTEX_STEPS = _T + "test_each_moving_vertex_and_deleted_vertex_step_is_seen_by_the_cylinder_iou_and_prereg_wed"
_DELETED_EDGE = _T + "test_each_deleted_edge_uncovers_gt_points_for_the_chamfer_and_lightens_the_spectrum"
_SYMMETRIC = _T + "test_the_corner_offset_and_spectral_distances_are_symmetric_and_blind_to_a_shift"
_AP_RADIUS = _T + "test_the_threshold_wed_follows_a_close_shift_proportionally_only_with_a_radius_beyond_the_shift"
_SQUARED = _T + "test_the_squared_spectral_distance_breaks_the_triangle_inequality_the_w2_distance_keeps"

_vertex_only = Diagnosis(Cause.METRIC, "a vertex-only score cannot change when only edges do (the paper's own corner "
                         "P/R/F1 fail this row); the paper's offset must read more than the vertices", _EDGE_ONLY)
_split = Diagnosis(Cause.SCHEDULE, "each step splits a fresh GT edge and pushes the new vertex 0.05 sideways, past "
                   "every threshold, so every step shows; the paper's splits and pushes could hide one", _DEFORM)
_gap = Diagnosis(Cause.SCHEDULE, "our gap (0.05) is past the corner threshold and leaves GT points uncovered, so each "
                 "break shows; the paper's gaps could stay within its thresholds", _DISCONNECT)
_random_samples = Diagnosis(Cause.PROTOCOL, "the paper samples the edges at random, so two samplings of one wireframe "
                            "differ; ours are deterministic (--paper-compat samples at random and agrees)",
                            _PROTO_IDENTITY)
_round_off = Diagnosis(Cause.PROTOCOL, "the paper checks d(x, x) == 0 exactly, which pre-registration's "
                       "(x - mean) / s * s + mean misses by round-off; ours allows 1e-9 on a relabelled copy "
                       "(--paper-compat agrees)", _PROTO_IDENTITY)
_normaliser = Diagnosis(Cause.PROTOCOL, "swapping the arguments swaps the GT length that divides the WED; the paper "
                        "compared the divided values, we compare before the division (--paper-compat agrees)",
                        _PROTO_SYMMETRY)
_symmetric = Diagnosis(Cause.METRIC, "ours is exactly symmetric by construction (a test swaps the arguments); the "
                       "paper's value says its implementation was not", _SYMMETRIC)
_shift_blind = Diagnosis(Cause.METRIC, "the spectrum ignores a translation: every difference is 0, which the test "
                         "counts as proportional; the paper's 0.72 is round-off in its eigenvalues", _SYMMETRIC)
_squared = Diagnosis(Cause.METRIC, "W2 between spectra is a metric and keeps the triangle inequality; the paper's "
                     "failures (its W1 passes) fit a squared distance", _SQUARED)

#: Diagnoses of differing cells, by (test, metric name prefix); "" matches every metric, the longest wins.
DIAGNOSES: dict[tuple[str, str], Diagnosis] = {
    ("Monotonic (wrong edges)", "corner_offset"): _vertex_only,
    ("Monotonic (wrong edges)", "wed"): Diagnosis(
        Cause.METRIC, "every WED deletes each wrong edge at its length, so ours rise strictly; the paper's 0.00 means "
        "its WEDs left wrong edges between matched vertices unpaid", _WRONG),
    ("Monotonic (wrong edges)", "jaccard"): Diagnosis(
        Cause.METRIC, "each wrong edge adds cylinder volume outside the GT's, which our exact containment sees; the "
        "paper's random point samples of the IoU can miss it", _WRONG),
    ("Monotonic (wrong edges)", "spectral"): Diagnosis(
        Cause.METRIC, "each wrong edge adds a positive weight to the Laplacian, which moves its spectrum away from "
        "the GT's; the paper's values say its spectra did not", _WRONG),
    ("Monotonic (deform/split)", "corner_offset"): _split,
    ("Monotonic (deform/split)", "wed"): _split,
    ("Monotonic (deform/split)", "edge_chamfer"): _split,
    ("Monotonic (deform/split)", "jaccard"): _split,
    ("Monotonic (deform/split)", "spectral"): _split,
    ("Monotonic (moving vertex)", "jaccard"): Diagnosis(
        Cause.SCHEDULE, "our moves land clear of the GT by more than the IoU radius, so the cylinders see every step; "
        "the paper's smaller moves stay inside them", _VERTEX_STEPS),
    ("Monotonic (disconnect edges)", "corner"): _gap,
    ("Monotonic (disconnect edges)", "wed_prereg"): _gap,
    ("Monotonic (disconnect edges)", "edge_chamfer"): _gap,
    ("Monotonic (disconnect edges)", "spectral"): _gap,
    ("Monotonic (delete vertices)", "wed_prereg"): Diagnosis(
        Cause.SCHEDULE, "each of our deletions removes at least one GT edge, so the pre-registered WED pays more every "
        "step; a deletion that removes no edge (a vertex whose neighbours are gone) changes less", _VERTEX_STEPS),
    ("Monotonic (delete vertices)", "jaccard"): Diagnosis(
        Cause.SCHEDULE, "each of our deletions removes at least one GT edge and its cylinder volume; a deletion that "
        "removes no edge leaves the cylinders as they were", _VERTEX_STEPS),
    ("Monotonic (delete vertices)", "spectral_l1"): Diagnosis(
        Cause.METRIC, "W1 compares the spectra as distributions, so a vertex fewer re-weights every eigenvalue; the "
        "paper's L1 rises like the zero-padded L1 of the sorted spectra (spectral_l1_padded)",
        _T + "test_the_zero_padded_spectral_l1_rises_with_each_deleted_vertex_where_w1_does_not"),
    ("Monotonic (delete edges)", "corner_offset"): _vertex_only,
    ("Monotonic (delete edges)", "edge_chamfer"): Diagnosis(
        Cause.METRIC, "each deleted edge leaves GT points farther from the prediction, so our length-weighted chamfer "
        "rises; the paper's (random samples) can miss a short edge", _DELETED_EDGE),
    ("Monotonic (delete edges)", "spectral"): Diagnosis(
        Cause.METRIC, "each deleted edge takes a positive weight out of the Laplacian and moves the spectrum",
        _DELETED_EDGE),
    ("Identity of indiscernibles", "wed_prereg"): _round_off,
    ("Identity of indiscernibles", "edge_chamfer"): _random_samples,
    ("Identity of indiscernibles", "edge_hausdorff"): _random_samples,
    ("Near identity of indiscernibles", "edge_chamfer"): _random_samples,
    ("Near identity of indiscernibles", "edge_hausdorff"): _random_samples,
    ("Symmetry (0 mean, weighted)", "corner_offset"): _symmetric,
    ("Symmetry (0 mean, weighted)", "wed"): _normaliser,
    ("Symmetry (0 mean, weighted)", "edge_hausdorff"): _random_samples,
    ("Symmetry (0 mean, weighted)", "spectral"): _symmetric,
    ("Near symmetry (0 mean, weighted)", "corner_offset"): _symmetric,
    ("Near symmetry (0 mean, weighted)", "wed"): _normaliser,
    ("Near symmetry (0 mean, weighted)", "spectral"): _symmetric,
    ("Symmetry (shift, weighted)", "edge_hausdorff"): _random_samples,
    ("Symmetry (shift, weighted)", "wed"): _normaliser,
    ("Symmetry (shift, weighted)", "wed_nearest"): Diagnosis(
        Cause.DATA, "nearest assignment is many-to-one: shifted by 0.05, a vertex within 0.05 of another goes to the "
        "other's copy one way only; our parts and houses have such pairs, the paper's houses fewer",
        _T + "test_the_nearest_wed_turns_asymmetric_under_a_shift_once_two_vertices_are_closer_than_the_shift"),
    ("Near symmetry (shift, weighted)", "wed"): _normaliser,
    ("Near symmetry (shift, weighted)", "wed_prereg"): Diagnosis(
        Cause.PROTOCOL, "pre-registration rescales each direction by the other's spread: ~1e-7 apart under 1e-4 noise, "
        "past our 1e-9 and numpy.isclose; the paper's tolerance was looser",
        _T + "test_pre_registration_makes_the_wed_asymmetric_by_the_ratio_of_the_two_spreads"),
    ("Quasi-proportionality (shift, far)", "edge_hausdorff"): _random_samples,
    ("Quasi-proportionality (shift, close)", "edge_hausdorff"): _random_samples,
    ("Quasi-proportionality (shift, far)", "spectral"): _shift_blind,
    ("Quasi-proportionality (shift, close)", "spectral"): _shift_blind,
    ("Quasi-proportionality (shift, close)", "wed_ap"): Diagnosis(
        Cause.METRIC, "the close shift (10 x 0.003) crosses our 0.02 match radius and the WED jumps; the paper's "
        "WED_AP radius must have been past 0.03 (Building3D's is in metres)", _AP_RADIUS),
    ("Triangle ineq. (add noise)", "wed"): Diagnosis(
        Cause.SCHEDULE, "our noise (0.01) keeps the vertex assignments, so every WED keeps the inequality; noise of "
        "the order of the vertex spacing (0.05) breaks it for MNN and nearest, as in the paper",
        _T + "test_the_weds_keep_the_triangle_inequality_under_small_noise_and_mnn_nearest_break_it_under_large"),
    ("Triangle ineq. (add noise)", "spectral"): _squared,
    ("Triangle ineq. (del1/del2)", "edge_chamfer"): Diagnosis(
        Cause.METRIC, "our chamfer (mean of the two directed means) keeps the inequality between thinned copies, "
        "with deterministic or random samples; the paper's 0.43 comes from its implementation",
        _T + "test_our_chamfer_keeps_the_triangle_inequality_between_thinned_copies_even_with_random_samples"),
    ("Monotonic (delete edges)", "jaccard"): Diagnosis(
        Cause.DATA, "on parts some deleted edges (short curve pieces, overlapping features) hide inside their "
        "neighbours' cylinders; on house wireframes every deletion shows (house run: passes)", _HOUSES),
    ("Triangle ineq. (del1/del2)", "spectral"): _squared,
}


def paper_rate(test: str, metric: str) -> float:
    """The paper's pass rate for this cell, NaN when the paper has no such column or row."""
    return PAPER_RATES.get(test, {}).get(metric, math.nan)


def _lookup(table: dict[tuple[str, str], Diagnosis], test: str, metric: str) -> Diagnosis | None:
    known = [(len(p), d.why, d) for (t, p), d in table.items() if t == test and metric.startswith(p)]
    return max(known)[2] if known else None


def diagnose(test: str, metric: str, paper_compat: bool = False) -> Diagnosis | None:
    """The longest-prefix diagnosis for a differing verdict of this cell (under the paper's protocol
    :data:`PAPER_PROTOCOL_DIAGNOSES` first), None when there is none."""
    found = _lookup(PAPER_PROTOCOL_DIAGNOSES, test, metric) if paper_compat else None
    return found if found is not None else _lookup(DIAGNOSES, test, metric)


def difference_reason(test: str, metric: str, paper_compat: bool = False) -> str:
    """The diagnosis of a differing verdict as one line, or 'not explained yet'."""
    found = diagnose(test, metric, paper_compat)
    return found.line() if found is not None else UNEXPLAINED


def differing_cells(rates: pd.DataFrame, threshold: float) -> list[tuple[str, str, float, float]]:
    """(test, metric, ours, paper) of every cell whose verdict (rate >= threshold) differs from the paper's."""
    out = []
    for test, row in rates.iterrows():
        for metric, ours in row.items():
            paper = paper_rate(str(test), str(metric))
            if not (np.isnan(paper) or pd.isna(ours)) and (paper >= threshold) != (float(ours) >= threshold):
                out.append((str(test), str(metric), float(ours), paper))
    return out


def unexplained_cells(
    rates: pd.DataFrame, threshold: float, paper_compat: bool = False
) -> list[tuple[str, str, float, float]]:
    """The differing cells (:func:`differing_cells`) that have no diagnosis."""
    return [c for c in differing_cells(rates, threshold) if diagnose(c[0], c[1], paper_compat) is None]

_fresh_samples = Diagnosis(Cause.PROTOCOL, "fresh random samples for each call make d(x, y) and d(y, x) differ by "
                          "sampling noise, past numpy.isclose; the paper's symmetry rows pass, so there its two calls "
                          "shared their samples", _T + "test_under_the_paper_protocol_a_pure_shift_keeps_the_weds_"
                          "symmetric_and_random_samples_do_not")

#: Diagnoses of cells that differ only under the paper's protocol (``--paper-compat``), looked up first there.
PAPER_PROTOCOL_DIAGNOSES: dict[tuple[str, str], Diagnosis] = {
    (test, metric): _fresh_samples
    for test in ("Symmetry (0 mean, weighted)", "Near symmetry (0 mean, weighted)", "Symmetry (shift, weighted)",
                 "Near symmetry (shift, weighted)")
    for metric in ("edge_chamfer", "edge_hausdorff")
} | {
    ("Monotonic (delete vertices)", "edge_chamfer"): Diagnosis(
        Cause.PROTOCOL, "random samples add noise to every chamfer value, larger than what deleting a vertex with short "
        "edges (curve pieces on parts) adds; the deterministic default passes",
        _T + "test_random_samples_add_noise_larger_than_what_deleting_a_short_edge_adds_to_the_chamfer"),
}
