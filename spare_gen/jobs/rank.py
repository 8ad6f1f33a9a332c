"""`spare-gen rank <out> <annotations.csv>`: rank corruption types (or variants) from pairwise judgements.

Reads ``<out>/pairs.parquet``, ``<out>/corruptions.parquet`` and the annotation CSV
(``pair_id,rater_id,choice``) and writes to ``<out>/reports/``: ``ranking.md`` (the paper's Table 1,
rater reliability, metric agreement, rater groups, majority error, adequacy, metric correlation),
``ranking.parquet``, ``rater_reliability.parquet``, ``metric_agreement.parquet``, ``rater_agreement.parquet``,
``rater_clusters.parquet``, ``cluster_rankings.parquet``, ``majority_error.parquet``, ``adequacy.parquet``,
``metric_correlation.parquet`` and ``ranking.png``. Every file is written atomically.

Repeat judgements (answers on 'repeat' pairs, or rows with is_repeat = 1) count once: they feed only the
raters' self-consistency. When ``reports/learned_scores.parquet`` or ``reports/learned_image_scores.parquet``
exists (``spare-gen learn-metric``, ``--features image``) its ``learned`` / ``learned_image`` column joins the metrics.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from scipy.stats import kendalltau

from spare_gen.jobs.learn_metric import IMAGE_SCORES_FILE, SCORES_FILE
from spare_gen import atomic
from spare_gen.ranking import (
    Item,
    build_judgements,
    item_labels,
    matchups,
    metric_agreement,
    metric_directions,
    rank_items,
    ranking_markdown,
    ranking_png,
    rater_reliability,
)
from spare_gen.ranking.bradley_terry import DEFAULT_L2, comparison_components
from spare_gen.ranking.judgements import PAIR_TYPES, VARIANT_COLUMNS, type_sort_key
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
from spare_gen.pool.pairs import ANSWER_COLUMNS, read_annotations

PAIRS_FILE = "pairs.parquet"
CORRUPTIONS_FILE = "corruptions.parquet"
REPORTS_DIR = "reports"
ITEMS = tuple(i.value for i in Item)
LEARNED_SCORES = SCORES_FILE  # written by `spare-gen learn-metric` into reports/
LEARNED = LEARNED_NAME
# Below this many judgements per item (the fewest any item has) a ranking is mostly noise: the run says so (a
# win rate from 20 judgements still has a 95 % interval of about +-20 points)
MIN_JUDGEMENTS_PER_ITEM = 20
# every learned score file of `spare-gen learn-metric` (--features metrics, image) -> its column
LEARNED_COLUMNS = {SCORES_FILE: LEARNED_NAME, IMAGE_SCORES_FILE: LEARNED_IMAGE_NAME}


def _read_inputs(out: Path, annotations_csv: Path, directions: Mapping[str, bool]):
    """pairs, the variant table (id, kind, severity and the metric columns only), the answers and metric names."""
    for path in (out / PAIRS_FILE, out / CORRUPTIONS_FILE):
        if not path.is_file():
            raise FileNotFoundError(f"rank needs {path}, which does not exist")
    pairs = pd.read_parquet(out / PAIRS_FILE)
    schema_names = pq.read_schema(out / CORRUPTIONS_FILE).names
    missing = [c for c in VARIANT_COLUMNS if c not in schema_names]
    if missing:
        raise ValueError(f"{out / CORRUPTIONS_FILE} is missing columns {missing}")
    metric_columns = [m for m in directions if m in schema_names]
    variants = pd.read_parquet(out / CORRUPTIONS_FILE, columns=[*VARIANT_COLUMNS, *metric_columns])
    variants["corruption_id"] = variants["corruption_id"].astype(str)
    for file_name, column in LEARNED_COLUMNS.items():
        learned_path = out / REPORTS_DIR / file_name
        if learned_path.is_file() and column in directions:
            learned = pd.read_parquet(learned_path, columns=["corruption_id", column])
            learned["corruption_id"] = learned["corruption_id"].astype(str)
            variants = variants.merge(learned, on="corruption_id", how="left")
            metric_columns.append(column)
    answers = read_annotations(annotations_csv, pairs)  # the CSV contract's own reader: one-line ValueError
    return pairs, variants, answers, metric_columns


def _to_parquet(path: Path, frame: pd.DataFrame) -> None:
    atomic.write_parquet(path, pa.Table.from_pandas(frame, preserve_index=False))


def run(
    out_dir: str | os.PathLike,
    annotations_csv: str | os.PathLike,  # an answers CSV or a folder of them (wireframes.pairs.ANNOTATION_FORMAT)
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
    if item not in ITEMS:
        raise ValueError(f"unknown item {item!r}; choose from {', '.join(ITEMS)}")
    out, annotations_csv, pair_types = Path(out_dir), Path(annotations_csv), tuple(pair_types)
    directions = metric_directions(higher_is_better)
    for file_name, column in LEARNED_COLUMNS.items():
        if higher_is_better is None and (out / REPORTS_DIR / file_name).is_file():
            directions[column] = True  # a learned metric predicts the preferred side: higher is better
    pairs, variants, answers, metric_columns = _read_inputs(out, annotations_csv, directions)
    # every answer, with the reader's is_repeat flag when it has one: reliability uses the repeats
    annotations = answers.loc[:, [*ANSWER_COLUMNS, *[c for c in ("is_repeat",) if c in answers.columns]]]
    once = without_repeats(answers, pairs).loc[:, list(ANSWER_COLUMNS)]  # each (pair, rater) counted once
    labels = item_labels(variants, item)
    judgements = build_judgements(pairs, once, labels, pair_types=pair_types)
    if judgements.empty:
        raise ValueError(f"no judgements on pairs of type {sorted(pair_types)} in {annotations_csv}")
    played = sorted(set(judgements["left_item"]) | set(judgements["right_item"]))
    items = sorted(played, key=type_sort_key) if item == Item.TYPE.value else played
    ranking = rank_items(judgements, items, l2=l2)
    reliability = rater_reliability(pairs, annotations)
    used = {m: directions[m] for m in metric_columns}
    agreement = metric_agreement(judgements, variants.set_index("corruption_id")[metric_columns], used)

    agree_matrix, shared = rater_agreement_matrix(judgements)
    clusters = rater_clusters(agree_matrix)
    cluster_tables = []
    for cluster, raters in clusters.groupby(clusters, sort=True):
        sub = judgements[judgements["rater_id"].isin(raters.index)]
        sub_items = [i for i in items if i in set(sub["left_item"]) | set(sub["right_item"])]
        if sub.empty or len(sub_items) < 2:
            continue
        sub_table = rank_items(sub, sub_items, l2=l2).table.loc[:, ["rank", "item", "win_rate", "bt_ability"]]
        cluster_tables.append(sub_table.assign(cluster=int(cluster), n_raters=int(len(raters))))
    cluster_rankings = pd.concat(cluster_tables, ignore_index=True) if cluster_tables else pd.DataFrame(
        columns=["rank", "item", "win_rate", "bt_ability", "cluster", "n_raters"])
    majority = majority_error(judgements)
    adequacy = adequacy_curves(judgements, items, samples=adequacy_samples)
    correlation = metric_correlation(variants.set_index("corruption_id")[metric_columns], used)
    simulated = is_simulated(judgements["rater_id"].unique())

    table = ranking.table
    tau_factor = kendalltau(table["bt_ability"], table["quality_factor"]).statistic
    tau_winrate = kendalltau(table["bt_ability"], table["win_rate"]).statistic
    same_item = int((judgements["left_item"] == judgements["right_item"]).sum())
    notes = [
        f"Kendall tau between BT and the quality factor: {tau_factor:.3f}; "
        f"between BT and the win rate: {tau_winrate:.3f}.",
        f"Metric directions from {'the caller' if higher_is_better is not None else 'the metric registry'}; "
        f"metrics without data in {CORRUPTIONS_FILE}: {sorted(set(directions) - set(used)) or 'none'}.",
    ]
    components = comparison_components(matchups(judgements, items))
    if components > 1:
        notes.append(
            f"The items form {components} groups that never meet in a pair (e.g. variants of different models): "
            "abilities compare only within a group; across groups their offsets come from the prior alone."
        )
    if same_item:
        notes.append(f"{same_item} judgements compared two variants of the same item and do not enter the ranking.")
    thin = _too_few_judgements(judgements, items)
    if thin:
        notes.append(f"WARNING: {thin}.")
        print(f"spare-gen rank: WARNING: {thin}", file=sys.stderr)

    reports = Path(dest) if dest is not None else out / REPORTS_DIR
    paths = {
        "ranking_md": reports / "ranking.md",
        "ranking": reports / "ranking.parquet",
        "rater_reliability": reports / "rater_reliability.parquet",
        "metric_agreement": reports / "metric_agreement.parquet",
        "ranking_png": reports / "ranking.png",
        "rater_agreement": reports / "rater_agreement.parquet",
        "rater_clusters": reports / "rater_clusters.parquet",
        "cluster_rankings": reports / "cluster_rankings.parquet",
        "majority_error": reports / "majority_error.parquet",
        "adequacy": reports / "adequacy.parquet",
        "metric_correlation": reports / "metric_correlation.parquet",
    }
    long_agree = agree_matrix.stack(future_stack=True).rename("agreement").rename_axis(["rater_a", "rater_b"])
    long_agree = long_agree.reset_index().assign(shared_pairs=shared.stack().to_numpy())
    _to_parquet(paths["rater_agreement"], long_agree)
    _to_parquet(paths["rater_clusters"], clusters.rename_axis("rater_id").reset_index())
    _to_parquet(paths["cluster_rankings"], cluster_rankings)
    _to_parquet(paths["majority_error"], majority)
    _to_parquet(paths["adequacy"], adequacy)
    _to_parquet(paths["metric_correlation"], correlation.rename_axis("metric").reset_index())
    _to_parquet(paths["ranking"], table)
    _to_parquet(paths["rater_reliability"], reliability)
    _to_parquet(paths["metric_agreement"], agreement)
    source = "simulated raters" if simulated else "human raters"
    if simulated:
        notes.append("Every rater id starts with 'sim-': these judgements are simulated, not human.")
    markdown = ranking_markdown(ranking, reliability, agreement, item=item, higher_is_better=used, notes=notes,
                                source=source)
    markdown += rater_analyses_markdown(agree_matrix, clusters, cluster_rankings, majority, adequacy, correlation)
    atomic.write_text(paths["ranking_md"], markdown)
    kind_of = dict(zip(variants["corruption_id"], variants["kind"].astype(str))) if item == Item.VARIANT.value else None
    title = (f"Ranking of corruption {item}s from {len(judgements)} judgements by "
             f"{judgements['rater_id'].nunique()} {source}")
    atomic.write_bytes(paths["ranking_png"], ranking_png(table, title=title, kind_of=kind_of))
    if not quiet:
        top = ", ".join(str(i) for i in table["item"].head(3))
        groups = clusters.value_counts().sort_index()
        print(f"spare-gen rank: {len(judgements)} judgements by {judgements['rater_id'].nunique()} {source} on "
              f"{len(table)} {item}s; best: {top}")
        print(f"spare-gen rank: rater groups: {', '.join(f'{c}: {n} raters' for c, n in groups.items())}; "
              f"best-agreeing metric: {_best_metric(agreement)}; reports in {reports}")
    return {
        **{name: str(path) for name, path in paths.items()},
        "item": item,
        "n_items": int(len(table)),
        "n_judgements": int(len(judgements)),
        "n_raters": int(judgements["rater_id"].nunique()),
        "top_item": str(table["item"].iloc[0]),
        "quality_factor_explained": ranking.factor.explained,
        "kendall_tau_bt_factor": float(tau_factor),
        "metrics": sorted(used),
        "clusters": {str(r): int(c) for r, c in clusters.items()},
        "simulated": simulated,
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
