"""Ranking from pairwise human judgements: win rates, Bradley-Terry/Elo, quality factor, raters, metrics.

Follows Sections 3-4 of "wireframe metrics vs human preferences" (ICCV 2025): the ranked items are
corruption types (kind/severity pooled over models) or single variants.
"""

from __future__ import annotations

from spare_gen.lazy import lazy_exports

# each submodule and its public names, imported when first used, so a command that needs one part (or
# `learn-metric --help`, which needs none) does not import scipy, sklearn and matplotlib through the rest
_MODULES = {
    "agreement": ("METRIC_TIE_TOL", "agreement_scores", "metric_agreement", "metric_directions", "metric_preference"),
    "bradley_terry": (
        "BradleyTerryFit", "ELO_OFFSET", "ELO_SCALE", "comparison_components", "elo_scores", "fit_bradley_terry",
        "implied_win_rates", "win_probability",
    ),
    "factor": ("QualityFactor", "quality_factor", "rater_item_rates"),
    "judgements": (
        "Choice", "Item", "PairType", "build_judgements", "item_labels", "validate_answers", "validate_pairs",
    ),
    "plot": ("ranking_figure", "ranking_files", "ranking_png"),
    "reliability": ("rater_reliability",),
    "report": ("ranking_markdown",),
    "simulate": ("simulate_judgements",),
    "table": ("Ranking", "rank_items"),
    "winrate": ("Matchups", "matchups", "win_rate_interval", "win_rates"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES)
