"""The Markdown ranking report: the paper's Table 1, rater reliability and metric agreement tables."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from spare_gen.ranking.agreement import SCOPE_ALL, SCOPE_RATER
from spare_gen.ranking.bradley_terry import ELO_OFFSET, ELO_SCALE
from spare_gen.ranking.table import Ranking


def _cell(value: object, fmt: str | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return format(value, fmt) if fmt else str(value)


def markdown_table(frame: pd.DataFrame, columns: Mapping[str, tuple[str, str | None]]) -> str:
    """GitHub table of ``frame``: ``columns`` maps column -> (header, format spec or None)."""
    header = "| " + " | ".join(h for h, _ in columns.values()) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(_cell(row[c], f) for c, (_, f) in columns.items()) + " |" for _, row in frame.iterrows()]
    return "\n".join([header, rule, *body])


RANKING_HEADERS = {
    "rank": ("#", None),
    "item": ("Item", None),
    "win_rate": ("Empirical win rate", ".2f"),
    "implied_win_rate_bt": ("Implied win rate (BT)", ".2f"),
    "implied_win_rate_elo": ("Implied win rate (Elo)", ".2f"),
    "bt_ability": ("BT ability", ".2f"),
    "bt_stderr": ("± s.e.", ".2f"),
    "elo": ("Elo score", ".0f"),
    "quality_factor": ("Quality factor", ".2f"),
    "games": ("Judgements", "d"),
}
RELIABILITY_HEADERS = {
    "rater_id": ("Rater", None),
    "n_judgements": ("Judgements", "d"),
    "equal_rate": ("'equal' share", ".2f"),
    "n_sanity": ("Known-winner pairs", "d"),
    "sanity_accuracy": ("Sanity accuracy", ".3f"),
    "n_repeat": ("Repeats", "d"),
    "self_consistency": ("Self-consistency", ".3f"),
}
AGREEMENT_HEADERS = {
    "metric": ("Metric", None),
    "direction": ("Better", None),
    "n": ("Judgements", "d"),
    "agreement": ("Agreement (all pairs)", ".3f"),
    "n_decisive": ("Decisive pairs", "d"),
    "agreement_decisive": ("Agreement (decisive)", ".3f"),
}


def ranking_markdown(
    ranking: Ranking,
    reliability: pd.DataFrame,
    agreement: pd.DataFrame,
    *,
    item: str,
    higher_is_better: Mapping[str, bool],
    notes: Sequence[str] = (),
) -> str:
    """The whole report as Markdown text."""
    lines = [
        "# Ranking from pairwise human judgements",
        "",
        f"Items: **{item}**. Judgements: {int(ranking.table['games'].sum() // 2)} between different items, "
        f"{reliability['n_judgements'].sum()} in all, from {len(reliability)} raters.",
        "",
        "Win rate: win 1, tie 0.5, loss 0. BT: Bradley-Terry ability (penalised maximum likelihood, ties as half "
        f"wins, L2 {ranking.bradley_terry.l2:g}); implied win rates are expected scores against the opponents met. "
        f"Elo = {ELO_SCALE:g} · ability + {ELO_OFFSET:g}. Quality factor: first left singular vector of the "
        f"item-by-rater log-odds table (share of variance {ranking.factor.explained:.2f}).",
        "",
        "## Ranking",
        "",
        markdown_table(ranking.table, RANKING_HEADERS),
        "",
        "## Rater reliability",
        "",
        "Sanity accuracy: the expected side chosen on pairs with a known winner (sanity pairs and their repeats; "
        "'equal' counts as wrong). Self-consistency: the same variant (or 'equal' twice) chosen on a pair and "
        "its side-swapped repeat.",
        "",
        markdown_table(reliability, RELIABILITY_HEADERS),
        "",
        "## Metric agreement with raters",
        "",
    ]
    overall = agreement[agreement["scope"] == SCOPE_ALL].copy()
    if overall.empty:
        lines.append("No metric with a known direction in the corruptions table; no agreement computed.")
    else:
        overall["direction"] = overall["metric"].map(lambda m: "higher" if higher_is_better[m] else "lower")
        overall = overall.sort_values(["agreement", "metric"], ascending=[False, True], kind="stable")
        lines += [
            "Same answer 1, one side vs 'equal' 0.5, opposite 0 (metric ties: values within 1e-12). "
            "Decisive: both the rater and the metric chose a side.",
            "",
            markdown_table(overall, AGREEMENT_HEADERS),
            "",
            "### Per rater (agreement, all pairs)",
            "",
        ]
        per_rater = agreement[agreement["scope"] == SCOPE_RATER]
        per_rater = per_rater.pivot(index="metric", columns="rater_id", values="agreement")
        per_rater = per_rater.reindex(overall["metric"]).reset_index()
        headers = {"metric": ("Metric", None), **{r: (str(r), ".3f") for r in per_rater.columns[1:]}}
        lines.append(markdown_table(per_rater, headers))
    if notes:
        lines += ["", "## Notes", "", *[f"- {n}" for n in notes]]
    return "\n".join(lines) + "\n"
