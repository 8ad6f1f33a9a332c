"""Ranking from pairwise human judgements: win rates, Bradley-Terry/Elo, quality factor, raters, metrics.

Follows Sections 3-4 of "wireframe metrics vs human preferences" (ICCV 2025): the ranked items are
corruption types (kind/severity pooled over models) or single variants.
"""

from __future__ import annotations

from spare_gen.lazy import lazy_exports

# each public name and the module it lives in: imported when first used, so a command that needs one part (or
# `learn-metric --help`, which needs none) does not import scipy, sklearn and matplotlib through the rest
_HOMES = {
    "METRIC_TIE_TOL": "spare_gen.ranking.agreement",
    "agreement_scores": "spare_gen.ranking.agreement",
    "metric_agreement": "spare_gen.ranking.agreement",
    "metric_directions": "spare_gen.ranking.agreement",
    "metric_preference": "spare_gen.ranking.agreement",
    "BradleyTerryFit": "spare_gen.ranking.bradley_terry",
    "ELO_OFFSET": "spare_gen.ranking.bradley_terry",
    "ELO_SCALE": "spare_gen.ranking.bradley_terry",
    "comparison_components": "spare_gen.ranking.bradley_terry",
    "elo_scores": "spare_gen.ranking.bradley_terry",
    "fit_bradley_terry": "spare_gen.ranking.bradley_terry",
    "implied_win_rates": "spare_gen.ranking.bradley_terry",
    "win_probability": "spare_gen.ranking.bradley_terry",
    "QualityFactor": "spare_gen.ranking.factor",
    "quality_factor": "spare_gen.ranking.factor",
    "rater_item_rates": "spare_gen.ranking.factor",
    "Choice": "spare_gen.ranking.judgements",
    "Item": "spare_gen.ranking.judgements",
    "PairType": "spare_gen.ranking.judgements",
    "build_judgements": "spare_gen.ranking.judgements",
    "item_labels": "spare_gen.ranking.judgements",
    "validate_annotations": "spare_gen.ranking.judgements",
    "validate_pairs": "spare_gen.ranking.judgements",
    "ranking_figure": "spare_gen.ranking.plot",
    "ranking_files": "spare_gen.ranking.plot",
    "ranking_png": "spare_gen.ranking.plot",
    "rater_reliability": "spare_gen.ranking.reliability",
    "ranking_markdown": "spare_gen.ranking.report",
    "simulate_judgements": "spare_gen.ranking.simulate",
    "Ranking": "spare_gen.ranking.table",
    "rank_items": "spare_gen.ranking.table",
    "Matchups": "spare_gen.ranking.winrate",
    "matchups": "spare_gen.ranking.winrate",
    "win_rate_interval": "spare_gen.ranking.winrate",
    "win_rates": "spare_gen.ranking.winrate",
}

__all__ = sorted(_HOMES)

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
