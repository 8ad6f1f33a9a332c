"""Ranking from pairwise human judgements: win rates, Bradley-Terry/Elo, quality factor, raters, metrics.

Follows Sections 3-4 of "wireframe metrics vs human preferences" (ICCV 2025): the ranked items are
corruption types (kind/severity pooled over models) or single variants.
"""

from spare_gen.ranking.agreement import (
    METRIC_TIE_TOL,
    agreement_scores,
    metric_agreement,
    metric_directions,
    metric_preference,
)
from spare_gen.ranking.bradley_terry import (
    ELO_OFFSET,
    ELO_SCALE,
    BradleyTerryFit,
    comparison_components,
    elo_scores,
    fit_bradley_terry,
    implied_win_rates,
    win_probability,
)
from spare_gen.ranking.factor import QualityFactor, quality_factor, rater_item_rates
from spare_gen.ranking.judgements import (
    Choice,
    Item,
    PairType,
    build_judgements,
    item_labels,
    validate_annotations,
    validate_pairs,
)
from spare_gen.ranking.plot import ranking_figure, ranking_files, ranking_png
from spare_gen.ranking.reliability import rater_reliability
from spare_gen.ranking.report import ranking_markdown
from spare_gen.ranking.simulate import simulate_judgements
from spare_gen.ranking.table import Ranking, rank_items
from spare_gen.ranking.winrate import Matchups, matchups, win_rate_interval, win_rates

__all__ = [
    "BradleyTerryFit",
    "Choice",
    "ELO_OFFSET",
    "ELO_SCALE",
    "Item",
    "METRIC_TIE_TOL",
    "Matchups",
    "PairType",
    "QualityFactor",
    "quality_factor",
    "Ranking",
    "agreement_scores",
    "comparison_components",
    "build_judgements",
    "elo_scores",
    "fit_bradley_terry",
    "implied_win_rates",
    "item_labels",
    "matchups",
    "metric_agreement",
    "metric_directions",
    "metric_preference",
    "rank_items",
    "ranking_markdown",
    "ranking_figure",
    "ranking_files",
    "ranking_png",
    "rater_item_rates",
    "rater_reliability",
    "simulate_judgements",
    "validate_annotations",
    "validate_pairs",
    "win_probability",
    "win_rate_interval",
    "win_rates",
]
