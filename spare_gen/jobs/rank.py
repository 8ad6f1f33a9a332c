"""`spare-gen rank <out> <answers.csv>`: rank corruption types (or corruptions) from pairwise judgements.

Reads ``<out>/pairs.parquet``, ``<out>/corruptions.parquet`` and the annotation CSV
(``pair_id,rater_id,choice``) and writes to ``<out>/reports/``: ``ranking.md`` (the paper's Table 1,
rater reliability, metric agreement, rater groups, majority error, adequacy, metric correlation),
``ranking.parquet``, ``rater_reliability.parquet``, ``metric_agreement.parquet``, ``rater_agreement.parquet``,
``rater_clusters.parquet``, ``cluster_rankings.parquet``, ``majority_error.parquet``, ``adequacy.parquet``,
``metric_correlation.parquet`` and the chart ``ranking.png`` (with ``ranking.svg`` and ``ranking.pdf`` beside it).
Every file is written atomically.

Repeat judgements (answers on 'repeat' pairs, or rows with is_repeat = 1) count once: they feed only the
raters' self-consistency. When ``reports/learned_scores.parquet`` or ``reports/learned_image_scores.parquet``
exists (``spare-gen learn-metric``, ``--features image``) its ``learned`` / ``learned_image`` column joins the metrics.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from scipy.stats import kendalltau

from spare_gen.jobs.learn_metric import IMAGE_SCORES_FILE, SCORES_FILE
from spare_gen import atomic
from spare_gen.ranking import (
    Item,
    Ranking,
    build_judgements,
    item_labels,
    matchups,
    metric_agreement,
    metric_directions,
    rank_items,
    ranking_markdown,
    ranking_files,
    rater_reliability,
)
from spare_gen.ranking.bradley_terry import DEFAULT_L2, comparison_components
from spare_gen.ranking.judgements import PAIR_TYPES, CORRUPTION_COLUMNS, type_sort_key
from spare_gen.ranking.learned import LEARNED_IMAGE_NAME, LEARNED_NAME
from spare_gen.ranking.raters import (
    adequacy_curves,
    is_simulated,
    majority_error,
    metric_correlation,
    rater_agreement_matrix,
    rater_clusters,
    without_repeats,
)
from spare_gen.ranking.report import rater_analyses_markdown
from spare_gen.store.inventory import REPORTS_DIR
from spare_gen.rating.pairs import ANSWER_COLUMNS, read_answers
from spare_gen.stages.pool.schema import CORRUPTIONS_FILE, PAIRS_FILE

ITEMS = tuple(i.value for i in Item)
# Below this many judgements per item (the fewest any item has) a ranking is mostly noise: the run says so (a
# win rate from 20 judgements still has a 95 % interval of about +-20 points)
MIN_JUDGEMENTS_PER_ITEM = 20
# every learned score file of `spare-gen learn-metric` (--features metrics, image) -> its column
LEARNED_COLUMNS = {SCORES_FILE: LEARNED_NAME, IMAGE_SCORES_FILE: LEARNED_IMAGE_NAME}


def _read_inputs(out: Path, answers_path: Path, directions: Mapping[str, bool]):
    """pairs, the corruption table (id, kind, severity and the metric columns only), the answers and metric names."""
    for path in (out / PAIRS_FILE, out / CORRUPTIONS_FILE):
        if not path.is_file():
            raise FileNotFoundError(f"rank needs {path}, which does not exist")
    pairs = pd.read_parquet(out / PAIRS_FILE)
    schema_names = pq.read_schema(out / CORRUPTIONS_FILE).names
    missing = [c for c in CORRUPTION_COLUMNS if c not in schema_names]
    if missing:
        raise ValueError(f"{out / CORRUPTIONS_FILE} is missing columns {missing}")
    metric_columns = [m for m in directions if m in schema_names]
    corruptions = pd.read_parquet(out / CORRUPTIONS_FILE, columns=[*CORRUPTION_COLUMNS, *metric_columns])
    corruptions["corruption_id"] = corruptions["corruption_id"].astype(str)
    for file_name, column in LEARNED_COLUMNS.items():
        learned_path = out / REPORTS_DIR / file_name
        if learned_path.is_file() and column in directions:
            learned = pd.read_parquet(learned_path, columns=["corruption_id", column])
            learned["corruption_id"] = learned["corruption_id"].astype(str)
            corruptions = corruptions.merge(learned, on="corruption_id", how="left")
            metric_columns.append(column)
    answers = read_answers(answers_path, pairs)  # the CSV contract's own reader: one-line ValueError
    return pairs, corruptions, answers, metric_columns


def _to_parquet(path: Path, frame: pd.DataFrame) -> None:
    atomic.write_parquet(path, pa.Table.from_pandas(frame, preserve_index=False))


@dataclass(frozen=True)
class RankInputs:
    """What ``rank`` reads: the judgements on the chosen pair types, every answer (for rater reliability), the
    corruptions with their metric columns, the metric directions and the ranked items."""

    item: str
    pairs: pd.DataFrame
    corruptions: pd.DataFrame
    answers: pd.DataFrame
    judgements: pd.DataFrame
    items: list
    directions: dict[str, bool]
    used: dict[str, bool]  # the metrics with data, and their directions


@dataclass(frozen=True)
class RankFit:
    """What ``rank`` fits: the ranking, rater reliability and agreement, rater groups and their rankings, majority
    error, adequacy and metric agreement and correlation."""

    ranking: Ranking
    reliability: pd.DataFrame
    agreement: pd.DataFrame
    agree_matrix: pd.DataFrame
    shared: pd.DataFrame
    clusters: pd.Series
    cluster_rankings: pd.DataFrame
    majority: pd.DataFrame
    adequacy: pd.DataFrame
    correlation: pd.DataFrame
    simulated: bool


def run(
    out_dir: str | os.PathLike,
    answers_path: str | os.PathLike,  # an answers CSV or a folder of them (rating.pairs.ANSWERS_FORMAT)
    *,
    item: str = Item.TYPE.value,
    higher_is_better: Mapping[str, bool] | None = None,
    pair_types: Iterable[str] = PAIR_TYPES,
    l2: float = DEFAULT_L2,
    adequacy_samples: int = 50,
    quiet: bool = False,
    dest: str | os.PathLike | None = None,
) -> dict:
    """Rank, check raters and metrics, write the reports; returns paths and headline numbers.

    ``higher_is_better`` (metric -> bool) overrides the metric registry's directions. ``pair_types``
    selects which pairs feed the ranking and the metric agreement (reliability always uses sanity and
    repeat pairs). ``dest``: the folder the reports go to (default ``<out>/reports``; an earlier report there is
    replaced).
    """
    inputs = load(Path(out_dir), Path(answers_path), item, higher_is_better, tuple(pair_types))
    fit = fit_all(inputs, l2, adequacy_samples)
    reports = Path(dest) if dest is not None else Path(out_dir) / REPORTS_DIR
    return report(reports, inputs, fit, higher_is_better is not None, quiet)


def load(out: Path, answers_path: Path, item: str, higher_is_better: Mapping[str, bool] | None,
         pair_types: tuple[str, ...]) -> RankInputs:
    """The inputs of a ranking of ``item``s; ValueError for an unknown item or no judgement to rank."""
    if item not in ITEMS:
        raise ValueError(f"unknown item {item!r}; choose from {', '.join(ITEMS)}")
    directions = metric_directions(higher_is_better)
    for file_name, column in LEARNED_COLUMNS.items():
        if higher_is_better is None and (out / REPORTS_DIR / file_name).is_file():
            directions[column] = True  # a learned metric predicts the preferred side: higher is better
    pairs, corruptions, answers, metric_columns = _read_inputs(out, answers_path, directions)
    # every answer, with the reader's is_repeat flag when it has one: reliability uses the repeats
    answers = answers.loc[:, [*ANSWER_COLUMNS, *[c for c in ("is_repeat",) if c in answers.columns]]]
    once = without_repeats(answers, pairs).loc[:, list(ANSWER_COLUMNS)]  # each (pair, rater) counted once
    judgements = build_judgements(pairs, once, item_labels(corruptions, item), pair_types=pair_types)
    if judgements.empty:
        raise ValueError(f"no judgements on pairs of type {sorted(pair_types)} in {answers_path}")
    played = sorted(set(judgements["left_item"]) | set(judgements["right_item"]))
    items = sorted(played, key=type_sort_key) if item == Item.TYPE.value else played
    return RankInputs(item, pairs, corruptions, answers, judgements, items, directions,
                      {m: directions[m] for m in metric_columns})


def _cluster_rankings(judgements: pd.DataFrame, items: list, clusters: pd.Series, l2: float) -> pd.DataFrame:
    """The ranking each rater group's own judgements give (groups with fewer than two items left out)."""
    cluster_tables = []
    for cluster, raters in clusters.groupby(clusters, sort=True):
        sub = judgements[judgements["rater_id"].isin(raters.index)]
        sub_items = [i for i in items if i in set(sub["left_item"]) | set(sub["right_item"])]
        if sub.empty or len(sub_items) < 2:
            continue
        sub_table = rank_items(sub, sub_items, l2=l2).table.loc[:, ["rank", "item", "win_rate", "bt_ability"]]
        cluster_tables.append(sub_table.assign(cluster=int(cluster), n_raters=int(len(raters))))
    return pd.concat(cluster_tables, ignore_index=True) if cluster_tables else pd.DataFrame(
        columns=["rank", "item", "win_rate", "bt_ability", "cluster", "n_raters"])


def fit_all(inputs: RankInputs, l2: float, adequacy_samples: int) -> RankFit:
    judgements, items, used = inputs.judgements, inputs.items, inputs.used
    ranking = rank_items(judgements, items, l2=l2)
    reliability = rater_reliability(inputs.pairs, inputs.answers)
    metric_values = inputs.corruptions.set_index("corruption_id")[list(used)]
    agreement = metric_agreement(judgements, metric_values, used)
    agree_matrix, shared = rater_agreement_matrix(judgements)
    clusters = rater_clusters(agree_matrix)
    return RankFit(
        ranking, reliability, agreement, agree_matrix, shared, clusters,
        _cluster_rankings(judgements, items, clusters, l2), majority_error(judgements),
        adequacy_curves(judgements, items, samples=adequacy_samples), metric_correlation(metric_values, used),
        is_simulated(judgements["rater_id"].unique()))


def _notes(inputs: RankInputs, fit: RankFit, caller_directions: bool) -> list[str]:
    table, judgements = fit.ranking.table, inputs.judgements
    tau_factor = kendalltau(table["bt_ability"], table["quality_factor"]).statistic
    tau_winrate = kendalltau(table["bt_ability"], table["win_rate"]).statistic
    same_item = int((judgements["left_item"] == judgements["right_item"]).sum())
    notes = [
        f"Kendall tau between BT and the quality factor: {tau_factor:.3f}; "
        f"between BT and the win rate: {tau_winrate:.3f}.",
        f"Metric directions from {'the caller' if caller_directions else 'the metric registry'}; "
        f"metrics without data in {CORRUPTIONS_FILE}: {sorted(set(inputs.directions) - set(inputs.used)) or 'none'}.",
    ]
    components = comparison_components(matchups(judgements, inputs.items))
    if components > 1:
        notes.append(
            f"The items form {components} groups that never meet in a pair (e.g. corruptions of different models): "
            "abilities compare only within a group; across groups their offsets come from the prior alone."
        )
    if same_item:
        notes.append(f"{same_item} judgements compared two corruptions of the same item and do not enter the ranking.")
    thin = _too_few_judgements(inputs.judgements, inputs.items)
    if thin:
        notes.append(f"WARNING: {thin}.")
        print(f"spare-gen rank: WARNING: {thin}", file=sys.stderr)
    if fit.simulated:
        notes.append("Every rater id starts with 'sim-': these judgements are simulated, not human.")
    return notes


REPORT_FILES = {
    "ranking_md": "ranking.md",
    "ranking": "ranking.parquet",
    "rater_reliability": "rater_reliability.parquet",
    "metric_agreement": "metric_agreement.parquet",
    "ranking_png": "ranking.png",
    "ranking_svg": "ranking.svg",  # the chart again, as vector graphics for papers
    "ranking_pdf": "ranking.pdf",
    "rater_agreement": "rater_agreement.parquet",
    "rater_clusters": "rater_clusters.parquet",
    "cluster_rankings": "cluster_rankings.parquet",
    "majority_error": "majority_error.parquet",
    "adequacy": "adequacy.parquet",
    "metric_correlation": "metric_correlation.parquet",
}


def report(reports: Path, inputs: RankInputs, fit: RankFit, caller_directions: bool, quiet: bool) -> dict:
    """Write every report into the folder ``reports``; return their paths and the headline numbers."""
    paths = {name: reports / file_name for name, file_name in REPORT_FILES.items()}
    table, judgements, item = fit.ranking.table, inputs.judgements, inputs.item
    notes = _notes(inputs, fit, caller_directions)
    long_agree = fit.agree_matrix.stack(future_stack=True).rename("agreement").rename_axis(["rater_a", "rater_b"])
    long_agree = long_agree.reset_index().assign(shared_pairs=fit.shared.stack().to_numpy())
    _to_parquet(paths["rater_agreement"], long_agree)
    _to_parquet(paths["rater_clusters"], fit.clusters.rename_axis("rater_id").reset_index())
    _to_parquet(paths["cluster_rankings"], fit.cluster_rankings)
    _to_parquet(paths["majority_error"], fit.majority)
    _to_parquet(paths["adequacy"], fit.adequacy)
    _to_parquet(paths["metric_correlation"], fit.correlation.rename_axis("metric").reset_index())
    _to_parquet(paths["ranking"], table)
    _to_parquet(paths["rater_reliability"], fit.reliability)
    _to_parquet(paths["metric_agreement"], fit.agreement)
    source = "simulated raters" if fit.simulated else "human raters"
    markdown = ranking_markdown(fit.ranking, fit.reliability, fit.agreement, item=item, higher_is_better=inputs.used,
                                notes=notes, source=source)
    markdown += rater_analyses_markdown(fit.agree_matrix, fit.clusters, fit.cluster_rankings, fit.majority,
                                        fit.adequacy, fit.correlation)
    atomic.write_text(paths["ranking_md"], markdown)
    corruptions = inputs.corruptions
    kind_of = dict(zip(corruptions["corruption_id"], corruptions["kind"].astype(str))) if item == Item.VARIANT.value else None
    title = (f"Ranking of corruption {item}s from {len(judgements)} judgements by "
             f"{judgements['rater_id'].nunique()} {source}")
    for suffix, data in ranking_files(table, title=title, kind_of=kind_of).items():
        atomic.write_bytes(paths[f"ranking_{suffix[1:]}"], data)
    if not quiet:
        top = ", ".join(str(i) for i in table["item"].head(3))
        groups = fit.clusters.value_counts().sort_index()
        print(f"spare-gen rank: {len(judgements)} judgements by {judgements['rater_id'].nunique()} {source} on "
              f"{len(table)} {item}s; best: {top}")
        print(f"spare-gen rank: rater groups: {', '.join(f'{c}: {n} raters' for c, n in groups.items())}; "
              f"best-agreeing metric: {_best_metric(fit.agreement)}; reports in {reports}")
    return {
        **{name: str(path) for name, path in paths.items()},
        "item": item,
        "n_items": int(len(table)),
        "n_judgements": int(len(judgements)),
        "n_raters": int(judgements["rater_id"].nunique()),
        "top_item": str(table["item"].iloc[0]),
        "quality_factor_explained": fit.ranking.factor.explained,
        "kendall_tau_bt_factor": float(kendalltau(table["bt_ability"], table["quality_factor"]).statistic),
        "metrics": sorted(inputs.used),
        "clusters": {str(r): int(c) for r, c in fit.clusters.items()},
        "simulated": fit.simulated,
    }


def _too_few_judgements(judgements: pd.DataFrame, items: list) -> str:
    """Why the ranking rests on too little data ('' when every item has MIN_JUDGEMENTS_PER_ITEM judgements)."""
    counts = pd.concat([judgements["left_item"], judgements["right_item"]]).value_counts()
    fewest = min(items, key=lambda i: (int(counts.get(i, 0)), str(i)))
    n = int(counts.get(fewest, 0))
    if n >= MIN_JUDGEMENTS_PER_ITEM:
        return ""
    return (f"{fewest} has only {n} judgement(s) (fewest of {len(items)} items; at least {MIN_JUDGEMENTS_PER_ITEM} "
            f"per item are needed): the order, 'best' included, is mostly noise; collect more answers")


def _best_metric(agreement: pd.DataFrame) -> str:
    overall = agreement[agreement["scope"] == "all"].dropna(subset=["agreement"])
    if overall.empty:
        return "none"
    best = overall.sort_values(["agreement", "metric"], ascending=[False, True]).iloc[0]
    return f"{best['metric']} ({best['agreement']:.3f})"
