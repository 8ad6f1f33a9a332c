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
    """Why a cell's verdict differs from the paper's, by kind; each is shown by an experiment, which the test suite
    runs so that it fails when the cause stops reproducing."""

    PROTOCOL = "paper protocol"  # the other mode (the paper's protocol, or ours) runs the cell its way and agrees
    DATA = "data"  # the paper's GT are houses, ours CSG/CAD parts (the house pool agrees), or a feature of our
    # generated houses that a test shows
    SCHEDULE = "schedule"  # under a paper-like perturbation schedule the cell agrees with the paper
    METRIC = "paper metric"  # a variant of the metric (the paper's implementation as its numbers show) agrees
    DEFINITION = "paper's definition"  # the metric as the paper's text defines it provably has (or lacks) the
    # property: a test shows it; the paper's rate cannot come from that definition and no variant is known
    CONFLICT = "paper's row conflicts"  # with the thresholds equal to the IoU radius, no perturbation size gives
    # both this cell's paper verdict and another of the same row: a test shows the trade-off


@dataclass(frozen=True)
class Diagnosis:
    """One line of cause and the experiment that shows it, in one sentence."""

    cause: Cause
    why: str
    experiment: str

    def line(self) -> str:
        return f"{self.cause.value}: {self.why} (experiment: {self.experiment})"


UNEXPLAINED = "not explained yet"


def _cells(diagnosis: Diagnosis, test: str, *metrics: str) -> dict[tuple[str, str], Diagnosis]:
    """The diagnosis of each named (test, metric) cell: one exact cell per metric, never a name prefix."""
    return {(test, m): diagnosis for m in metrics}


_WEDS = ("wed_prereg", "wed_mnn", "wed_nearest", "wed_ap")
_vertex_only = Diagnosis(Cause.DEFINITION, "a score of the vertices alone cannot change when only edges do (the "
                         "paper's own corner P/R/F1 fail this row); the paper's 1.00 needs an offset that reads "
                         "edges", "Vertex-only metrics cannot see wrong or deleted edges")
_wrong = Diagnosis(Cause.DEFINITION, "each wrong edge is an edge the WED deletes at its length, cylinder volume "
                   "outside the GT's and a positive weight in the Laplacian, so the metric as defined rises at every "
                   "step", "Every WED spectrum and cylinder IoU rises with each wrong edge")
_collinear = Diagnosis(Cause.SCHEDULE, "our split pushes the new vertex 0.05 off the edge; split collinearly, as the "
                       "paper's Figure 1 (--paper-compat), the edge's points and cylinders stay where they were and no step "
                       "shows",
                       "Collinear splits leave the chamfer and the cylinder IoU unchanged")
_random_samples = Diagnosis(Cause.PROTOCOL, "the paper samples the edges at random, so two samplings of one "
                            "wireframe differ; ours are deterministic (--paper-compat samples at random and agrees)",
                            "Under the paper protocol, identity is d(x, x), and round-off or random samples fail it")
_sampling_noise = Diagnosis(Cause.PROTOCOL, "random edge samples add noise to every chamfer value, larger than what "
                            "one small break or deleted edge adds, so a step can look like a fall (--paper-compat "
                            "samples at random and agrees)",
                            "Random samples hide steps the deterministic chamfer sees")
_round_off = Diagnosis(Cause.PROTOCOL, "the paper checks d(x, x) == 0 exactly, which pre-registration's "
                       "(x - mean) / s * s + mean misses by round-off; ours allows 1e-9 on a relabelled copy "
                       "(--paper-compat agrees)",
                       "Under the paper protocol, identity is d(x, x), and round-off or random samples fail it")
_pure_shift = Diagnosis(Cause.PROTOCOL, "our shift rows add the noise too, which changes the GT length that divides "
                        "the WED; the paper's translate only, keeping every length (--paper-compat agrees)",
                        "A pure shift keeps the WEDs symmetric where our noisy shift does not")
_symmetric = Diagnosis(Cause.DEFINITION, "the metric as defined is symmetric (a test swaps the arguments); the "
                       "paper's value says its implementation was not",
                       "The corner offset and spectral distances are symmetric and blind to a shift")
_shift_blind = Diagnosis(Cause.DEFINITION, "a translation leaves every edge length and so the spectrum unchanged: "
                         "every difference is 0, which the test counts as proportional",
                         "The corner offset and spectral distances are symmetric and blind to a shift")
_normalised = Diagnosis(Cause.METRIC, "the paper's Spectral L2 behaves like W2 between the normalised Laplacians' "
                        "spectra (spectral_normalised), which do not follow a break or a deleted edge step by step "
                        "(--paper-compat compares it and agrees)",
                        "The normalised spectrum misses steps that the length-weighted one follows")
_padded = Diagnosis(Cause.METRIC, "W1 compares the spectra as distributions, so a vertex fewer re-weights every "
                    "eigenvalue; the paper's L1 rises like the zero-padded L1 (spectral_l1_padded; --paper-compat "
                    "compares it as a relative error and agrees)",
                    "The zero-padded spectral L1 rises with each deleted vertex where W1 does not")
_relative_l1 = Diagnosis(Cause.METRIC, "the paper's L1 fails this row as its WEDs do (0.44 each), as an L1 divided by a "
                         "size of the GT must once noise changes that size; the relative L1 (spectral_l1_relative, "
                         "--paper-compat) agrees",
                         "An L1 divided by a size of the GT is not symmetric under noise as the WEDs")
_squared = Diagnosis(Cause.METRIC, "W2 between spectra is a metric and keeps the triangle inequality; a squared "
                     "distance breaks it as the paper's L2 does (its L1 passes; --paper-compat compares "
                     "spectral_normalised_squared)",
                     "The squared spectral distance breaks the triangle inequality the W2 distance keeps")
_thinned_spectrum = Diagnosis(Cause.DATA, "squared, the normalised spectral distance breaks the inequality on thinned "
                              "copies of wireframes with close vertices (two cubes with a chimney: 0.60) but rarely on "
                              "our houses' (128 houses: 0.93)",
                              "The squared normalised spectrum breaks the triangle on wireframes with close vertices")
_box_splits = Diagnosis(Cause.DATA, "split collinearly, the boxes CSG parts are made of raise the zero-padded spectrum at "
                        "every step; a house with a chimney does not (the house pool's 0.50 agrees)",
                        "Collinear splits raise the padded spectrum of boxes but not always of a house")
_ap_radius = Diagnosis(Cause.METRIC, "the close shift (10 x 0.003) crosses our 0.02 match radius and the WED jumps; "
                       "with a radius past 0.03 (Building3D's is in metres) it stays proportional",
                       "The threshold WED follows a close shift proportionally only with a radius beyond the shift")
_house_edges = Diagnosis(Cause.DATA, "on parts some deleted edges (short curve pieces, overlapping features) hide "
                         "inside their neighbours' cylinders; on house wireframes every deletion shows",
                         "A short edge inside its neighbours' cylinders is deleted unseen")

_split_costs = Diagnosis(Cause.DEFINITION, "every split, collinear or pushed, adds a vertex no GT vertex is matched "
                         "to and replaces a GT edge by two pieces: the OSPA offset charges the vertex and each WED pays "
                         "the vertex and the edge at every step",
                         "Every split adds an unmatched vertex and replaces a GT edge which the offset and every WED "
                         "charge")
_short_split = Diagnosis(Cause.DATA, "half of an edge shorter than twice the 0.02 threshold still matches the whole "
                         "(segment Hausdorff within the threshold), so its collinear split is unseen; 2 of our 12 "
                         "houses split such an edge (chimney and dormer edges)",
                         "A collinear split of an edge shorter than twice the edge threshold leaves edge recall "
                         "unchanged")
_w1_split = Diagnosis(Cause.DEFINITION, "a split adds an eigenvalue and divides one edge weight in two: W1 between the "
                      "spectra rises at every step, split collinearly or pushed",
                      "Every split adds a vertex and divides a weight which the W1 spectrum follows")
_move_conflict = Diagnosis(Cause.CONFLICT, "the paper's corner recall sees every move (1.00), so each moved vertex "
                           "leaves the 0.02 threshold, which takes its edges out of the GT's capsules of the same "
                           "radius: the IoU sees every step too",
                           "A move the corner recall sees takes the vertex edges out of the GT cylinders")
_moving_l2 = Diagnosis(Cause.METRIC, "compared with spectral_normalised_squared, the variant that matches the column's other "
                       "monotonic rows; the text's length-weighted W2 (spectral) follows every move, as the paper's",
                       "A moved vertex moves the length-weighted spectrum every step but not always the normalised one")
_unmatched_break = Diagnosis(Cause.CONFLICT, "each break's new vertex is matched to no GT vertex however small the gap; "
                             "read as the paper's text (correct within the threshold of any GT corner) a break under "
                             "the threshold would go unseen, but such a gap is also lost to the cylinder IoU, which "
                             "the paper's sees at every step (1.00)",
                             "Every break leaves a vertex unmatched and a break under the radius is lost to the IoU")
_break_eigen = Diagnosis(Cause.DEFINITION, "a break adds a vertex (one more eigenvalue) and shortens one edge weight: "
                         "W1 and the zero-padded L1 both rise at every step",
                         "Each break adds an eigenvalue both readings of the spectral L1 count")
_break_prereg = Diagnosis(Cause.DEFINITION, "each break adds an unmatched vertex and pulls a GT edge's end 0.05 away: "
                          "the pre-registered WED pays both at every step (the house pool's 0.67 agrees)",
                          "Each disconnect step is seen by the corners, prereg WED, chamfer and spectra")
_deleted_vertex = Diagnosis(Cause.DEFINITION, "each deleted vertex takes at least one GT edge with it: its capsule "
                            "leaves the union and the WED pays its length, pre-registered or not",
                            "Each moving vertex and deleted vertex step is seen by the cylinder IoU and prereg WED")
_hausdorff_symmetric = Diagnosis(Cause.DEFINITION, "Hausdorff is the larger of the two directed distances, so swapping "
                                 "the arguments changes nothing, with deterministic samples or each wireframe's random "
                                 "samples kept",
                                 "The Hausdorff distance is the same both ways with each wireframe keeping its samples")
_prereg_shift = Diagnosis(Cause.DEFINITION, "pre-registration moves the prediction onto the GT's mean, so after a pure "
                          "translation both directions are round-off, equal under numpy.isclose",
                          "Pre-registration removes a translation so the shifted WED is round-off both ways")
_thinned_chamfer = Diagnosis(Cause.DEFINITION, "a copy missing edges only uncovers points of x, each counted in "
                             "d(y, x) or, where y keeps its edge, in d(z, y): the chamfer keeps the inequality on "
                             "thinned copies, with deterministic or random samples",
                             "Copies that only lose edges keep the chamfer triangle inequality")
_far_hausdorff = Diagnosis(Cause.PROTOCOL, "deterministic samples make each 0.025 shift step grow the Hausdorff "
                           "distance by the same amount; random samples (--paper-compat) add noise beyond 5 % of a step "
                           "and agree",
                           "A far shift is linear for the deterministic Hausdorff and noisy for random samples")
_chained_noise = Diagnosis(Cause.SCHEDULE, "our two noisy copies are independent and under the thresholds, so no "
                           "vertex changes its assignment; with the noise added twice at 0.03 (--paper-compat) close "
                           "vertices swap assignments and the cell agrees",
                           "Noise added twice past the thresholds swaps WED vertex assignments and breaks the triangle")

#: Our default metric -> the variant that behaves like the paper's implementation where its numbers show one
#: other than its text; ``--paper-compat`` compares the variant with the paper's column instead.
PAPER_VARIANTS = {"spectral_l1": "spectral_l1_relative", "spectral": "spectral_normalised_squared"}


#: Diagnoses that hold in both modes, by exact (test, metric) cell under our metric names (under
#: ``--paper-compat`` a metric of :data:`PAPER_VARIANTS` stands for its variant).
_BOTH_MODES: dict[tuple[str, str], Diagnosis] = {
    **_cells(_vertex_only, "Monotonic (wrong edges)", "corner_offset"),
    **_cells(_wrong, "Monotonic (wrong edges)", "wed_prereg", "wed_mnn", "wed_nearest", "jaccard_distance",
             "spectral_l1"),
    **_cells(_vertex_only, "Monotonic (delete edges)", "corner_offset"),
    **_cells(_house_edges, "Monotonic (delete edges)", "jaccard_distance"),
    **_cells(_symmetric, "Symmetry (0 mean, weighted)", "corner_offset"),
    **_cells(_symmetric, "Near symmetry (0 mean, weighted)", "corner_offset"),
    **_cells(_shift_blind, "Quasi-proportionality (shift, far)", "spectral"),
    **_cells(_shift_blind, "Quasi-proportionality (shift, close)", "spectral"),
    **_cells(_ap_radius, "Quasi-proportionality (shift, close)", "wed_ap"),
    **_cells(_split_costs, "Monotonic (deform/split)", "corner_offset", *_WEDS),
    **_cells(_move_conflict, "Monotonic (moving vertex)", "jaccard_distance"),
    **_cells(_unmatched_break, "Monotonic (disconnect edges)", "corner_precision", "corner_f1", "corner_offset"),
    **_cells(_break_prereg, "Monotonic (disconnect edges)", "wed_prereg"),
    **_cells(_break_eigen, "Monotonic (disconnect edges)", "spectral_l1"),
    **_cells(_deleted_vertex, "Monotonic (delete vertices)", "wed_prereg", "jaccard_distance"),
    **_cells(_hausdorff_symmetric, "Symmetry (0 mean, weighted)", "edge_hausdorff"),
    **_cells(_hausdorff_symmetric, "Symmetry (shift, weighted)", "edge_hausdorff"),
    **_cells(_thinned_chamfer, "Triangle ineq. (del1/del2)", "edge_chamfer"),
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
    **_cells(_w1_split, "Monotonic (deform/split)", "spectral_l1"),
    **_cells(_squared, "Triangle ineq. (add noise)", "spectral"),
    **_cells(_squared, "Triangle ineq. (del1/del2)", "spectral"),
    **_cells(_relative_l1, "Symmetry (0 mean, weighted)", "spectral_l1"),
    **_cells(_pure_shift, "Symmetry (shift, weighted)", "wed_mnn", "wed_nearest", "wed_ap"),
    **_cells(_far_hausdorff, "Quasi-proportionality (shift, far)", "edge_hausdorff"),
    **_cells(_chained_noise, "Triangle ineq. (add noise)", "wed_prereg", "wed_mnn", "wed_nearest"),
    **_cells(_pure_shift, "Near symmetry (shift, weighted)", *_WEDS),
    **_cells(_random_samples, "Quasi-proportionality (shift, close)", "edge_hausdorff"),
}

_fixed_samples = Diagnosis(Cause.PROTOCOL, "random samples drawn afresh for each call make a chamfer step look like "
                           "a fall; the deterministic default passes",
                           "Random samples add noise larger than what deleting a short edge adds to the chamfer")

#: Diagnoses of the cells that differ under the paper's protocol (``--paper-compat``), by exact cell.
PAPER_COMPAT_DIAGNOSES: dict[tuple[str, str], Diagnosis] = {
    **{(test, PAPER_VARIANTS.get(metric, metric)): found for (test, metric), found in _BOTH_MODES.items()},
    **_cells(_fixed_samples, "Monotonic (delete vertices)", "edge_chamfer"),
    **_cells(_short_split, "Monotonic (deform/split)", "edge_recall"),
    **_cells(_box_splits, "Monotonic (deform/split)", "spectral_l1_relative"),
    **_cells(_moving_l2, "Monotonic (moving vertex)", "spectral_normalised_squared"),
    **_cells(_thinned_spectrum, "Triangle ineq. (del1/del2)", "spectral_normalised_squared"),
    **_cells(_prereg_shift, "Symmetry (shift, weighted)", "wed_prereg"),
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
