"""Agreement of each metric with the raters (paper Sec. 4, "Finding agreement").

For a judged pair the metric prefers the side whose corruption scores better (respecting the metric's
direction), or says 'equal' when the two values are within ``tol``. Against the rater's choice:
same answer 1 point, one decisive and the other 'equal' 0.5, opposite sides 0. We also report the
agreement on pairs where both are decisive (the paper's supplementary table without ties).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from spare_gen.metrics.catalog import METRICS, Direction
from spare_gen.ranking.judgements import Choice

METRIC_TIE_TOL = 1e-12
SCOPE_ALL = "all"
SCOPE_RATER = "rater"
AGREEMENT_COLUMNS = ("metric", "scope", "rater_id", "n", "agreement", "n_decisive", "agreement_decisive")


def metric_directions(higher_is_better: Mapping[str, bool] | None = None) -> dict[str, bool]:
    """Metric name -> higher is better: the explicit mapping, else the ``spare_gen.metrics.catalog`` registry."""
    if higher_is_better is not None:
        bad = {k: v for k, v in higher_is_better.items() if not isinstance(v, (bool, np.bool_))}
        if bad:
            raise ValueError(f"higher_is_better values must be bool, got {bad}")
        return {str(k): bool(v) for k, v in higher_is_better.items()}
    return {name: metric.direction is Direction.HIGHER_IS_BETTER for name, metric in METRICS.items()}


def metric_preference(left: np.ndarray, right: np.ndarray, higher_is_better: bool, tol: float = METRIC_TIE_TOL):
    """The side a metric prefers per pair: 'left', 'right' or 'equal' (|left - right| <= tol)."""
    diff = np.asarray(left, float) - np.asarray(right, float)
    if not higher_is_better:
        diff = -diff
    return np.where(np.abs(diff) <= tol, Choice.EQUAL.value, np.where(diff > 0, Choice.LEFT.value, Choice.RIGHT.value))


def agreement_scores(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1 for the same answer, 0.5 when exactly one of them is 'equal', 0 for opposite sides."""
    a, b = np.asarray(a), np.asarray(b)
    one_equal = (a == Choice.EQUAL.value) != (b == Choice.EQUAL.value)
    return np.where(a == b, 1.0, np.where(one_equal, 0.5, 0.0))


def _summary(scores: pd.Series, decisive: pd.Series) -> dict:
    n, n_dec = int(len(scores)), int(decisive.sum())
    return {
        "n": n,
        "agreement": float(scores.mean()) if n else np.nan,
        "n_decisive": n_dec,
        "agreement_decisive": float(scores[decisive].mean()) if n_dec else np.nan,
    }


def metric_agreement(
    judgements: pd.DataFrame,
    metric_values: pd.DataFrame,
    higher_is_better: Mapping[str, bool],
    *,
    tol: float = METRIC_TIE_TOL,
) -> pd.DataFrame:
    """Long table (AGREEMENT_COLUMNS): per metric one 'all' row, then one row per rater.

    ``judgements`` needs left_id, right_id, rater_id, choice; ``metric_values`` is indexed by corruption id
    with one column per metric. Pairs where either corruption's value is missing (NaN) are skipped.
    """
    missing = [name for name in higher_is_better if name not in metric_values.columns]
    if missing:
        raise ValueError(f"metric values lack columns {missing}; they have {list(metric_values.columns)}")
    rows = []
    for name, higher in higher_is_better.items():
        values = metric_values[name].astype(float)
        left = judgements["left_id"].map(values).to_numpy(float)
        right = judgements["right_id"].map(values).to_numpy(float)
        known = ~(np.isnan(left) | np.isnan(right))
        prefers = metric_preference(left[known], right[known], higher, tol)
        choice = judgements["choice"].to_numpy()[known]
        frame = pd.DataFrame(
            {
                "rater_id": judgements["rater_id"].to_numpy()[known],
                "score": agreement_scores(prefers, choice),
                "decisive": (prefers != Choice.EQUAL.value) & (choice != Choice.EQUAL.value),
            }
        )
        rows.append({"metric": name, "scope": SCOPE_ALL, "rater_id": None, **_summary(frame.score, frame.decisive)})
        for rater, group in frame.groupby("rater_id", sort=True):
            summary = _summary(group.score, group.decisive)
            rows.append({"metric": name, "scope": SCOPE_RATER, "rater_id": rater, **summary})
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
