"""Quality factor: first left singular vector of the item-by-rater log-odds of win rates (paper Sec. 4).

If one latent "quality" drives every rater, the log-odds table is close to rank one and its first
left singular vector orders the items. Following the paper, the table is not centred. Cells are
clipped away from 0 and 1 (log-odds would be infinite), and a cell a rater never saw is 0 log-odds
(win rate 0.5), the neutral value that leaves the factor to the raters who saw the item.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import logit

DEFAULT_CLIP = 0.02


@dataclass(frozen=True)
class QualityFactor:
    """Per-item scores (unit vector, sign fixed to agree with the overall win rate) and how rank-one the table is."""

    scores: pd.Series
    explained: float  # sigma_1^2 / sum sigma^2: 1.0 for an exactly rank-one table
    singular_values: np.ndarray


def rater_item_rates(judgements: pd.DataFrame, items: list[str] | tuple[str, ...] | None = None) -> pd.DataFrame:
    """Items x raters table of win rates (wins + ties/2 over games); NaN where the rater never saw the item."""
    played = judgements[judgements["left_item"] != judgements["right_item"]]
    sides = pd.concat(
        [
            pd.DataFrame({"item": played["left_item"], "rater_id": played["rater_id"], "score": played["left_score"]}),
            pd.DataFrame(
                {"item": played["right_item"], "rater_id": played["rater_id"], "score": 1.0 - played["left_score"]}
            ),
        ],
        ignore_index=True,
    )
    table = sides.pivot_table(index="item", columns="rater_id", values="score", aggfunc="mean")
    if items is not None:
        table = table.reindex(list(items))
    return table.sort_index(axis=1)


def quality_factor(
    judgements: pd.DataFrame,
    items: list[str] | tuple[str, ...] | None = None,
    *,
    clip: float = DEFAULT_CLIP,
) -> QualityFactor:
    """SVD of eta = log(M / (1 - M)) for the items x raters win-rate table M; returns the first left vector."""
    if not 0.0 < clip < 0.5:
        raise ValueError(f"clip must be in (0, 0.5), got {clip!r}")
    rates = rater_item_rates(judgements, items)
    m = rates.to_numpy(float)
    eta = np.where(np.isnan(m), 0.0, logit(np.clip(m, clip, 1 - clip)))
    u, sigma, _ = np.linalg.svd(eta, full_matrices=False)
    first = u[:, 0] if len(sigma) else np.zeros(len(rates))
    played = ~np.isnan(m).all(axis=1)
    overall = np.full(len(rates), np.nan)
    overall[played] = np.nanmean(m[played], axis=1)
    # singular vectors have no sign: orient so that a higher score goes with a higher mean win rate
    corr = 0.0
    if played.sum() > 1 and first[played].std() > 0 and overall[played].std() > 0:
        corr = float(np.corrcoef(first[played], overall[played])[0, 1])
    if corr < 0 or (corr == 0 and first.sum() < 0):
        first = -first
    total = float((sigma**2).sum())
    explained = float(sigma[0] ** 2 / total) if total > 0 else float("nan")
    scores = pd.Series(first, index=rates.index, name="quality_factor")
    return QualityFactor(scores=scores, explained=explained, singular_values=sigma)
