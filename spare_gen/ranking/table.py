"""The ranking table of the paper's Table 1: win rates, Bradley-Terry, Elo and the quality factor per item."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from spare_gen.ranking.bradley_terry import (
    DEFAULT_L2,
    ELO_OFFSET,
    ELO_SCALE,
    BradleyTerryFit,
    elo_scores,
    fit_bradley_terry,
    implied_win_rates,
)
from spare_gen.ranking.factor import DEFAULT_CLIP, QualityFactor, quality_factor
from spare_gen.ranking.winrate import matchups, win_rates

RANKING_COLUMNS = (
    "rank",
    "item",
    "games",
    "wins",
    "ties",
    "losses",
    "win_rate",
    "win_rate_low",
    "win_rate_high",
    "implied_win_rate_bt",
    "implied_win_rate_elo",
    "bt_ability",
    "bt_stderr",
    "elo",
    "quality_factor",
)


@dataclass(frozen=True)
class Ranking:
    """The table (best item first) and the fits behind it."""

    table: pd.DataFrame
    bradley_terry: BradleyTerryFit
    factor: QualityFactor


def rank_items(
    judgements: pd.DataFrame,
    items: list[str] | tuple[str, ...] | None = None,
    *,
    l2: float = DEFAULT_L2,
    clip: float = DEFAULT_CLIP,
    elo_scale: float = ELO_SCALE,
    elo_offset: float = ELO_OFFSET,
) -> Ranking:
    """Rank the items of ``judgements`` (left_item, right_item, left_score, rater_id) by Bradley-Terry ability.

    Ties in ability keep the given item order (default: sorted labels), so the table is deterministic.
    """
    pooled = matchups(judgements, items)
    fit = fit_bradley_terry(pooled, l2=l2)
    elo = elo_scores(fit.ability, scale=elo_scale, offset=elo_offset)
    factor = quality_factor(judgements, pooled.items, clip=clip)
    table = win_rates(judgements, pooled.items).reset_index()
    table["implied_win_rate_bt"] = implied_win_rates(fit.ability, pooled)
    table["implied_win_rate_elo"] = implied_win_rates(elo, pooled, scale=elo_scale)
    table["bt_ability"] = fit.ability
    table["bt_stderr"] = fit.stderr
    table["elo"] = elo
    table["quality_factor"] = factor.scores.reindex(list(pooled.items)).to_numpy()
    order = np.lexsort((np.arange(len(table)), -table["bt_ability"].to_numpy()))
    table = table.iloc[order].reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1, dtype=np.int64))
    return Ranking(table=table.loc[:, list(RANKING_COLUMNS)], bradley_terry=fit, factor=factor)
