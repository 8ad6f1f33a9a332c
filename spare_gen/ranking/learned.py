"""A metric learned from pairwise judgements: which combination of the metrics best predicts people.

The paper distils a metric from judgements with DINOv2 features and an MLP; its weights cannot be
downloaded here. This is the transparent counterpart: a Bradley-Terry / logistic model over metric
differences. Each metric is oriented so that higher is better and standardised over the corruptions (z-score);
for a judged pair the features are z(left) - z(right) and the target is 1 when the left side won, 0 when the
right side did; 'equal' answers are left out of the fit (they carry no side). No intercept, so swapping the
sides negates the prediction. The learned score of a corruption is w . z(corruption) (higher is better).

Agreement is cross-validated with folds grouped by model (no model is in both the fit and the test) and
scored exactly like every single metric (1 same side, 0.5 when the person said 'equal', 0 opposite), on the
same held-out judgements, so the comparison is like for like.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, KFold

from spare_gen.ranking.agreement import agreement_scores, metric_preference
from spare_gen.ranking.features import Features
from spare_gen.ranking.judgements import Choice

DEFAULT_FOLDS = 5
DEFAULT_C = 1.0  # inverse L2 strength of the logistic fit
LEARNED_NAME = "learned"
LEARNED_IMAGE_NAME = "learned_image"  # the score column of `learn-metric --features image` (higher is better)


@dataclass(frozen=True)
class LearnedMetric:
    """Weights over standardised, oriented metrics; ``score`` gives a corruption's learned value."""

    metrics: tuple[str, ...]
    higher_is_better: tuple[bool, ...]
    means: tuple[float, ...]
    stds: tuple[float, ...]
    weights: tuple[float, ...]

    def standardise(self, values: pd.DataFrame) -> np.ndarray:
        sign = np.where(self.higher_is_better, 1.0, -1.0)
        x = values.loc[:, list(self.metrics)].to_numpy(float) * sign
        z = (x - np.asarray(self.means)) / np.asarray(self.stds)
        return np.nan_to_num(z, nan=0.0)  # a missing value sits at the mean

    def score(self, values: pd.DataFrame) -> np.ndarray:
        return self.standardise(values) @ np.asarray(self.weights)

    def to_json(self) -> str:
        return json.dumps({"kind": "logistic-over-metric-differences", **self.__dict__}, indent=2, default=list)

    @classmethod
    def from_json(cls, text: str) -> "LearnedMetric":
        data = json.loads(text)
        return cls(*(tuple(data[k]) for k in ("metrics", "higher_is_better", "means", "stds", "weights")))


def standardiser(values: pd.DataFrame, higher_is_better: Mapping[str, bool]) -> tuple[tuple, tuple]:
    """(means, stds) of the oriented metric columns over the corruptions (std 1 for a constant metric)."""
    sign = np.array([1.0 if higher_is_better[m] else -1.0 for m in higher_is_better])
    x = values.loc[:, list(higher_is_better)].to_numpy(float) * sign
    means = np.nanmean(x, axis=0)
    stds = np.nanstd(x, axis=0)
    stds = np.where(np.isfinite(stds) & (stds > 0), stds, 1.0)
    return tuple(float(v) for v in np.nan_to_num(means)), tuple(float(v) for v in stds)


def fit_learned_metric(
    judgements: pd.DataFrame, values: pd.DataFrame, higher_is_better: Mapping[str, bool], *, c: float = DEFAULT_C
) -> LearnedMetric:
    """Fit the weights on the decisive judgements (columns left_id, right_id, choice); ``values`` is indexed
    by corruption id with one column per metric."""
    means, stds = standardiser(values, higher_is_better)
    base = LearnedMetric(tuple(higher_is_better), tuple(higher_is_better.values()), means, stds,
                         tuple(0.0 for _ in higher_is_better))  # fmt: skip
    decisive = judgements[judgements["choice"] != Choice.EQUAL.value]
    if decisive.empty or decisive["choice"].nunique() < 2:
        raise ValueError("learn-metric needs decisive judgements for both sides (left and right); got too few")
    z = base.standardise(values)
    position = pd.Series(np.arange(len(values)), index=values.index.astype(str))
    left = position.reindex(decisive["left_id"].astype(str)).to_numpy()
    right = position.reindex(decisive["right_id"].astype(str)).to_numpy()
    x = z[left] - z[right]
    y = (decisive["choice"] == Choice.LEFT.value).to_numpy(int)
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=1000).fit(x, y)
    return LearnedMetric(base.metrics, base.higher_is_better, means, stds, tuple(float(w) for w in model.coef_[0]))


def _agreement(choice: np.ndarray, left: np.ndarray, right: np.ndarray, higher: bool) -> float:
    known = ~(np.isnan(left) | np.isnan(right))
    return float(agreement_scores(metric_preference(left[known], right[known], higher), choice[known]).mean())


def cross_validated_agreement(
    judgements: pd.DataFrame,
    values: pd.DataFrame,
    higher_is_better: Mapping[str, bool],
    *,
    folds: int = DEFAULT_FOLDS,
    c: float = DEFAULT_C,
) -> pd.DataFrame:
    """Held-out agreement of the learned metric and of every single metric on the same judgements.

    Folds group judgements by model_id (by pair_id when there are fewer models than folds). Columns:
    metric, agreement (mean over held-out judgements), std_over_folds; best first.
    """
    groups_column = "model_id" if judgements["model_id"].nunique() >= folds else "pair_id"
    groups = judgements[groups_column].astype(str).to_numpy()
    n_splits = min(folds, len(np.unique(groups)))
    if n_splits < 2:
        raise ValueError(f"learn-metric needs at least 2 groups of judgements for cross-validation, got {n_splits}")
    splitter = GroupKFold(n_splits=n_splits) if groups_column == "model_id" else KFold(n_splits, shuffle=False)
    split_args = (judgements, None, groups) if groups_column == "model_id" else (judgements,)
    names = [LEARNED_NAME, *higher_is_better]
    per_fold = {n: [] for n in names}
    sizes = []
    for train, test in splitter.split(*split_args):
        fit_on, held = judgements.iloc[train], judgements.iloc[test]
        learned = fit_learned_metric(fit_on, values, higher_is_better, c=c)
        scores = pd.Series(learned.score(values), index=values.index.astype(str))
        columns = {LEARNED_NAME: (scores, True), **{m: (values[m].astype(float), h) for m, h in higher_is_better.items()}}
        choice = held["choice"].to_numpy()
        for name, (series, higher) in columns.items():
            left = held["left_id"].astype(str).map(series).to_numpy(float)
            right = held["right_id"].astype(str).map(series).to_numpy(float)
            per_fold[name].append(_agreement(choice, left, right, higher))
        sizes.append(len(held))
    weights = np.asarray(sizes, float)
    rows = [{"metric": n, "agreement": float(np.average(per_fold[n], weights=weights)),
             "std_over_folds": float(np.std(per_fold[n]))} for n in names]  # fmt: skip
    table = pd.DataFrame(rows).sort_values(["agreement", "metric"], ascending=[False, True], kind="stable")
    return table.reset_index(drop=True)


def learned_scores(learned: LearnedMetric, values: pd.DataFrame) -> pd.DataFrame:
    """corruption_id, learned: every corruption's learned score (higher is better)."""
    return pd.DataFrame({"corruption_id": values.index.astype(str), LEARNED_NAME: learned.score(values)})


def weights_table(learned: LearnedMetric) -> pd.DataFrame:
    return pd.DataFrame({"metric": list(learned.metrics), "weight": list(learned.weights)}).sort_values(
        "weight", key=np.abs, ascending=False, kind="stable"
    )


def select_metrics(available: Sequence[str], requested: Sequence[str] | None) -> list[str]:
    if not requested:
        return list(available)
    unknown = [m for m in requested if m not in available]
    if unknown:
        raise ValueError(f"learn-metric: metric {unknown[0]!r} is not in the corruptions table; it has {list(available)}")
    return list(requested)
