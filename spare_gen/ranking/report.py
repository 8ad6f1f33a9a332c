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
    if fmt == "d":
        value = int(value)  # iterrows turns ints into floats in mixed-type frames
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
    "win_rate_low": ("95 % low", ".2f"),
    "win_rate_high": ("95 % high", ".2f"),
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
    source: str = "human raters",
) -> str:
    """The report's ranking, reliability and agreement sections as Markdown text (``source`` names the raters)."""
    lines = [
        f"# Ranking from pairwise judgements ({source})",
        "",
        f"Items: **{item}**. Judgements: {int(ranking.table['games'].sum() // 2)} between different items, "
        f"{reliability['n_judgements'].sum()} in all (repeats included), from {len(reliability)} {source}; "
        "each repeat judgement counts once in the ranking and the agreement tables.",
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


def _matrix_table(matrix: pd.DataFrame, fmt: str = ".2f") -> str:
    frame = matrix.reset_index().rename(columns={matrix.index.name or "index": ""})
    first = frame.columns[0]
    headers = {first: ("", None), **{c: (str(c), fmt) for c in frame.columns[1:]}}
    return markdown_table(frame, headers)


def rater_analyses_markdown(
    agreement: pd.DataFrame,
    clusters: pd.Series,
    cluster_rankings: pd.DataFrame,
    majority: pd.DataFrame,
    adequacy: pd.DataFrame,
    correlation: pd.DataFrame,
) -> str:
    """Sections for the rater-rater agreement, rater groups and their rankings, majority error, adequacy
    and metric-metric correlation (paper Fig. 4, 5, 8, 10-12)."""
    lines = [
        "",
        "## Rater-rater agreement",
        "",
        "Mean agreement on the pairs both raters judged (1 same, 0.5 one 'equal', 0 opposite); – when they "
        "share too few pairs.",
        "",
        _matrix_table(agreement.rename_axis("rater")),
        "",
        "## Rater groups",
        "",
        "Average-linkage clustering of 1 - agreement; the number of groups maximises the agreement gap within "
        "vs across groups (one group when no split gains 0.05).",
        "",
    ]
    for cluster, members in clusters.groupby(clusters, sort=True):
        lines.append(f"- Group {cluster} ({len(members)}): {', '.join(map(str, members.index))}")
    for cluster, table in cluster_rankings.groupby("cluster", sort=True):
        lines += ["", f"### Ranking of group {cluster}", ""]
        lines.append(markdown_table(table, {"rank": ("#", None), "item": ("Item", None),
                                            "win_rate": ("Win rate", ".2f"), "bt_ability": ("BT ability", ".2f")}))
    lines += [
        "",
        "## Probability that a majority picks the wrong winner",
        "",
        "k raters drawn at random per pair; wrong = their majority differs from the whole panel's decisive one.",
        "",
        markdown_table(majority, {"panel_size": ("Raters k", "d"), "n_pairs": ("Pairs", "d"),
                                  "p_wrong_winner": ("P(wrong winner)", ".3f")}),
        "",
        "## Are there enough raters and pairs?",
        "",
        "Kendall tau between the full ranking and one from a random subset (mean, 5th-95th percentile).",
        "",
        markdown_table(adequacy, {"resource": ("Subset of", None), "fraction": ("Fraction", ".1f"), "n": ("Kept", "d"),
                                  "tau_mean": ("tau", ".3f"), "tau_low": ("5 %", ".3f"), "tau_high": ("95 %", ".3f")}),
        "",
        "## Metric-metric correlation",
        "",
        "Spearman correlation over the variants, every metric oriented so that higher is better.",
        "",
        _matrix_table(correlation.rename_axis("metric")),
    ]
    return "\n".join(lines) + "\n"
