"""Rater analyses of the ICCV 2025 metrics paper (Sec. 4, Fig. 4-5, Supp. 9): who agrees with whom, rater
groups and their own rankings, how often a majority of k raters picks the wrong winner, whether the numbers
of raters and pairs suffice, and how the metrics correlate with each other.

Every function takes the judgements table of :func:`spare_gen.ranking.judgements.build_judgements` with each
pair judged once per rater (repeats already removed, see :func:`without_repeats`). Randomness comes from
``derive_rng(seed, "rater-analyses", ...)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from scipy.stats import kendalltau

from spare_gen.ranking.agreement import agreement_scores
from spare_gen.ranking.judgements import Choice, PairType
from spare_gen.rng import derive_rng

MIN_SHARED_PAIRS = 5  # two raters with fewer common pairs get no agreement value
MAX_CLUSTERS = 4
MIN_CLUSTER_GAP = 0.05  # groups must agree this much more within than across, else one group
PANEL_SIZES = (1, 3, 5, 7, 9)
ADEQUACY_FRACTIONS = (0.2, 0.4, 0.6, 0.8, 1.0)
BOOTSTRAP_SAMPLES = 200
SIMULATED_PREFIX = "sim-"  # rater ids written by `spare-gen simulate-raters`


def without_repeats(answers: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The answers with every repeat judgement removed, so each (pair, rater) counts once.

    A repeat is an answer on a pair of type 'repeat' in pairs.parquet, or a row marked ``is_repeat`` = 1
    when the answers file has that column (the rater app's second judgement of the same pair_id).
    """
    repeat_ids = set(pairs.loc[pairs["pair_type"] == PairType.REPEAT.value, "pair_id"].astype(str))
    keep = ~answers["pair_id"].astype(str).isin(repeat_ids)
    if "is_repeat" in answers.columns:
        keep &= pd.to_numeric(answers["is_repeat"], errors="coerce").fillna(0).astype(int) != 1
    return answers[keep].reset_index(drop=True)


def is_simulated(rater_ids: Sequence[str]) -> bool:
    """Whether every rater is a simulated one (ids from ``spare-gen simulate-raters``)."""
    ids = [str(r) for r in rater_ids]
    return bool(ids) and all(r.startswith(SIMULATED_PREFIX) for r in ids)


def rater_agreement_matrix(judgements: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(agreement, shared pairs): rater x rater mean agreement (1 same, 0.5 one 'equal', 0 opposite) on
    the pairs both judged; NaN when they share fewer than :data:`MIN_SHARED_PAIRS`. Diagonal 1."""
    wide = judgements.pivot_table(index="pair_id", columns="rater_id", values="choice", aggfunc="first")
    raters = sorted(wide.columns.astype(str))
    wide = wide.reindex(columns=raters)
    values = wide.to_numpy(dtype=object)
    present = ~pd.isna(wide).to_numpy()
    n = len(raters)
    agree = np.full((n, n), np.nan)
    shared = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        for j in range(i, n):
            both = present[:, i] & present[:, j]
            shared[i, j] = shared[j, i] = int(both.sum())
            if i == j:
                agree[i, i] = 1.0
            elif both.sum() >= MIN_SHARED_PAIRS:
                agree[i, j] = agree[j, i] = float(agreement_scores(values[both, i], values[both, j]).mean())
    return pd.DataFrame(agree, index=raters, columns=raters), pd.DataFrame(shared, index=raters, columns=raters)


def rater_clusters(agreement: pd.DataFrame, max_clusters: int = MAX_CLUSTERS) -> pd.Series:
    """Rater -> group number (1 = largest group): average-linkage clustering of 1 - agreement.

    The number of groups k (1..max_clusters) maximises the gap between the mean agreement within groups
    and across groups; a split is kept only when that gap is at least :data:`MIN_CLUSTER_GAP`, so raters
    who all agree alike form one group. Missing agreements count as 0.5 (chance for a side choice).
    """
    raters = list(agreement.index)
    if len(raters) < 3:
        return pd.Series(1, index=raters, name="cluster", dtype=np.int64)
    sim = agreement.fillna(0.5).to_numpy(float)
    dist = np.clip(1.0 - 0.5 * (sim + sim.T), 0.0, None)
    np.fill_diagonal(dist, 0.0)
    tree = linkage(squareform(dist, checks=False), method="average")
    best, best_gap = np.ones(len(raters), dtype=np.int64), MIN_CLUSTER_GAP
    off_diagonal = ~np.eye(len(raters), dtype=bool)
    for k in range(2, min(max_clusters, len(raters) - 1) + 1):
        labels = fcluster(tree, k, criterion="maxclust")
        same = (labels[:, None] == labels[None, :]) & off_diagonal
        across = labels[:, None] != labels[None, :]
        if not same.any() or not across.any():
            continue
        gap = sim[same].mean() - sim[across].mean()
        if gap > best_gap + 1e-12:
            best, best_gap = labels, gap
    # renumber: largest group first, ties by first rater id
    order = sorted(set(best), key=lambda c: (-(best == c).sum(), raters[int(np.argmax(best == c))]))
    renumber = {c: i + 1 for i, c in enumerate(order)}
    return pd.Series([renumber[c] for c in best], index=raters, name="cluster", dtype=np.int64)


def _majority(choices: np.ndarray) -> str:
    """The majority of a set of answers: the side with more votes, 'equal' on a tie of sides."""
    left = int((choices == Choice.LEFT.value).sum())
    right = int((choices == Choice.RIGHT.value).sum())
    return Choice.LEFT.value if left > right else Choice.RIGHT.value if right > left else Choice.EQUAL.value


def majority_error(
    judgements: pd.DataFrame, panel_sizes: Sequence[int] = PANEL_SIZES, *, samples: int = 50, seed: int = 0
) -> pd.DataFrame:
    """Probability that a panel of k random raters picks a different winner than the whole panel (Fig. 5).

    Over pairs with a decisive full-panel majority and at least k answers: draw k of the pair's raters
    without replacement ``samples`` times and count how often their majority (left/right, 'equal' when
    tied) differs. Columns: panel_size, n_pairs, p_wrong_winner.
    """
    groups = [g["choice"].to_numpy() for _, g in judgements.groupby("pair_id", sort=True)]
    full = [_majority(g) for g in groups]
    rows = []
    for k in panel_sizes:
        rng = derive_rng(seed, "rater-analyses", "majority", int(k))
        wrong, n = 0, 0
        used = 0
        for answers, truth in zip(groups, full):
            if truth == Choice.EQUAL.value or len(answers) < k:
                continue
            used += 1
            for _ in range(samples):
                pick = answers[rng.choice(len(answers), size=k, replace=False)]
                wrong += _majority(pick) != truth
                n += 1
        rows.append({"panel_size": int(k), "n_pairs": used, "p_wrong_winner": wrong / n if n else np.nan})
    return pd.DataFrame(rows)


def _win_rates(left: np.ndarray, right: np.ndarray, score: np.ndarray, n_items: int) -> np.ndarray:
    games = np.bincount(left, minlength=n_items) + np.bincount(right, minlength=n_items)
    wins = np.bincount(left, weights=score, minlength=n_items) + np.bincount(right, weights=1 - score, minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, wins / np.maximum(games, 1), 0.5)


def adequacy_curves(
    judgements: pd.DataFrame,
    items: Sequence[str],
    fractions: Sequence[float] = ADEQUACY_FRACTIONS,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Are there enough raters and pairs? Kendall tau between the full ranking and the ranking from a random
    subset (a fraction of the raters, or of the pairs, drawn without replacement).

    Rankings here are by win rate (the table's empirical column; vectorised, so hundreds of resamples are
    cheap); items a subset never shows sit at 0.5. A curve flat near 1 well before fraction 1 says more
    data would barely change the ranking. Columns: resource ('raters' / 'pairs'), fraction, n (kept),
    tau_mean, tau_low, tau_high (5th and 95th percentiles over ``samples`` draws).
    """
    played = judgements[judgements["left_item"] != judgements["right_item"]]
    index = {name: i for i, name in enumerate(items)}
    left = played["left_item"].map(index).to_numpy(np.int64)
    right = played["right_item"].map(index).to_numpy(np.int64)
    score = played["left_score"].to_numpy(float)
    full = _win_rates(left, right, score, len(items))
    rows = []
    for resource, column in (("raters", "rater_id"), ("pairs", "pair_id")):
        codes, units = pd.factorize(played[column].astype(str), sort=True)
        for fraction in fractions:
            n = max(1, int(round(fraction * len(units))))
            rng = derive_rng(seed, "rater-analyses", "adequacy", resource, float(fraction))
            taus = []
            for _ in range(samples if n < len(units) else 1):
                keep = np.zeros(len(units), dtype=bool)
                keep[rng.choice(len(units), size=n, replace=False)] = True
                mask = keep[codes]
                sub = _win_rates(left[mask], right[mask], score[mask], len(items))
                taus.append(kendalltau(full, sub).statistic)
            taus = np.asarray(taus, float)
            rows.append({
                "resource": resource, "fraction": float(fraction), "n": n,
                "tau_mean": float(np.nanmean(taus)), "tau_low": float(np.nanquantile(taus, 0.05)),
                "tau_high": float(np.nanquantile(taus, 0.95)),
            })  # fmt: skip
    return pd.DataFrame(rows)


def metric_correlation(metric_values: pd.DataFrame, higher_is_better: Mapping[str, bool]) -> pd.DataFrame:
    """Spearman rank correlation between metrics over the variants (NaN for a metric that never varies), each oriented so higher is better
    (so +1 means the two metrics order the variants identically)."""
    names = [m for m in higher_is_better if m in metric_values.columns]
    oriented = pd.DataFrame({m: metric_values[m].astype(float) * (1 if higher_is_better[m] else -1) for m in names})
    # Spearman = Pearson on ranks; pairwise complete rows; a constant metric correlates with nothing (NaN)
    return oriented.rank().corr(method="pearson").reindex(index=names, columns=names)
