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

#: Diagnoses of differing cells, by (test, metric name prefix); "" matches every metric, the longest wins.
DIAGNOSES: dict[tuple[str, str], Diagnosis] = {}


def paper_rate(test: str, metric: str) -> float:
    """The paper's pass rate for this cell, NaN when the paper has no such column or row."""
    return PAPER_RATES.get(test, {}).get(metric, math.nan)


def diagnose(test: str, metric: str) -> Diagnosis | None:
    """The longest-prefix diagnosis for a differing verdict of this cell, None when there is none."""
    known = [(len(p), d.why, d) for (t, p), d in DIAGNOSES.items() if t == test and metric.startswith(p)]
    return max(known)[2] if known else None


def difference_reason(test: str, metric: str) -> str:
    """The diagnosis of a differing verdict as one line, or 'not explained yet'."""
    found = diagnose(test, metric)
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


def unexplained_cells(rates: pd.DataFrame, threshold: float) -> list[tuple[str, str, float, float]]:
    """The differing cells (:func:`differing_cells`) that have no diagnosis."""
    return [c for c in differing_cells(rates, threshold) if diagnose(c[0], c[1]) is None]
