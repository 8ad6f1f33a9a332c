"""`spare-gen rank <out> <annotations.csv>`: rank corruption types (or variants) from pairwise judgements.

Reads ``<out>/pairs.parquet``, ``<out>/corruptions.parquet`` and the annotation CSV
(``pair_id,rater_id,choice``) and writes to ``<out>/reports/``: ``ranking.md`` (the paper's Table 1,
rater reliability, metric agreement), ``ranking.parquet``, ``rater_reliability.parquet``,
``metric_agreement.parquet`` and ``ranking.png``. Every file is written atomically.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from scipy.stats import kendalltau

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
from spare_gen.ranking.judgements import (
    PAIR_TYPES,
    REPEAT_COLUMN,
    VARIANT_COLUMNS,
    first_judgements,
    type_sort_key,
)
from spare_gen.wireframes.pairs import ANSWER_COLUMNS, read_annotations

PAIRS_FILE = "pairs.parquet"
CORRUPTIONS_FILE = "corruptions.parquet"
REPORTS_DIR = "reports"
ITEMS = tuple(i.value for i in Item)


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
    answers = read_annotations(annotations_csv, pairs)  # the CSV contract's own reader: one-line ValueError
    annotations = answers.loc[:, [*ANSWER_COLUMNS, REPEAT_COLUMN]]
    return pairs, variants, annotations, metric_columns


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
) -> dict:
    """Rank, check raters and metrics, write the reports; returns paths and headline numbers.

    ``higher_is_better`` (metric -> bool) overrides the metric registry's directions. ``pair_types``
    selects which pairs feed the ranking and the metric agreement (reliability always uses sanity and
    repeat pairs).
    """
    if item not in ITEMS:
        raise ValueError(f"unknown item {item!r}; choose from {', '.join(ITEMS)}")
    out, annotations_csv, pair_types = Path(out_dir), Path(annotations_csv), tuple(pair_types)
    directions = metric_directions(higher_is_better)
    pairs, variants, annotations, metric_columns = _read_inputs(out, annotations_csv, directions)
    labels = item_labels(variants, item)
    # a rater's second judgement of a pair (is_repeat=1) is kept for reliability, not counted twice in the ranking
    judgements = first_judgements(build_judgements(pairs, annotations, labels, pair_types=pair_types))
    if judgements.empty:
        raise ValueError(f"no judgements on pairs of type {sorted(pair_types)} in {annotations_csv}")
    played = sorted(set(judgements["left_item"]) | set(judgements["right_item"]))
    items = sorted(played, key=type_sort_key) if item == Item.TYPE.value else played
    ranking = rank_items(judgements, items, l2=l2)
    reliability = rater_reliability(pairs, annotations)
    used = {m: directions[m] for m in metric_columns}
    agreement = metric_agreement(judgements, variants.set_index("corruption_id")[metric_columns], used)

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

    reports = out / REPORTS_DIR
    paths = {
        "ranking_md": reports / "ranking.md",
        "ranking": reports / "ranking.parquet",
        "rater_reliability": reports / "rater_reliability.parquet",
        "metric_agreement": reports / "metric_agreement.parquet",
        "ranking_png": reports / "ranking.png",
    }
    _to_parquet(paths["ranking"], table)
    _to_parquet(paths["rater_reliability"], reliability)
    _to_parquet(paths["metric_agreement"], agreement)
    markdown = ranking_markdown(ranking, reliability, agreement, item=item, higher_is_better=used, notes=notes)
    atomic.write_text(paths["ranking_md"], markdown)
    kind_of = dict(zip(variants["corruption_id"], variants["kind"].astype(str))) if item == Item.VARIANT.value else None
    title = f"Ranking of corruption {item}s by human judgements"
    atomic.write_bytes(paths["ranking_png"], ranking_png(table, title=title, kind_of=kind_of))
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
    }
