"""`spare-gen learn-metric OUT ANSWERS.csv`: learn which combination of metrics predicts the raters.

Reads ``<out>/pairs.parquet``, ``<out>/corruptions.parquet`` (the metric columns) and the answers (a CSV
or a folder of CSVs, through the answers reader; repeats count once). Writes to ``<out>/reports/``:
``learned_metric.json`` (the model: metrics, orientation, standardisation, weights), ``learned_scores.parquet``
(corruption_id, learned; `spare-gen rank` then adds a ``learned`` column to its metric tables),
``learned_metric_cv.parquet`` and ``learned_metric.md`` (cross-validated agreement of the learned metric and of
every single metric). Every file is written atomically.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen import atomic
from spare_gen.ranking.agreement import metric_directions
from spare_gen.ranking.judgements import VARIANT_COLUMNS, build_judgements
from spare_gen.ranking.learned import (
    DEFAULT_FOLDS,
    cross_validated_agreement,
    fit_learned_metric,
    learned_scores,
    select_metrics,
    weights_table,
)
from spare_gen.ranking.raters import without_repeats
from spare_gen.ranking.report import markdown_table
from spare_gen.pool.pairs import ANSWER_COLUMNS, read_annotations

REPORTS_DIR = "reports"
MODEL_FILE = "learned_metric.json"
SCORES_FILE = "learned_scores.parquet"
CV_FILE = "learned_metric_cv.parquet"
MARKDOWN_FILE = "learned_metric.md"


def run(
    out_dir: str | os.PathLike,
    answers_path: str | os.PathLike,
    *,
    metrics: Sequence[str] | None = None,
    folds: int = DEFAULT_FOLDS,
    quiet: bool = False,
) -> dict:
    """Fit, cross-validate and save the learned metric; returns paths, weights and agreements."""
    out = Path(out_dir)
    for path in (out / "pairs.parquet", out / "corruptions.parquet", Path(answers_path)):
        if not path.exists():
            raise FileNotFoundError(f"learn-metric needs {path}, which does not exist")
    directions = metric_directions()
    present = set(pq.read_schema(out / "corruptions.parquet").names)
    available = [m for m in directions if m in present]
    names = select_metrics(available, metrics)
    variants = pd.read_parquet(out / "corruptions.parquet", columns=[VARIANT_COLUMNS[0], *names])
    values = variants.set_index(variants["corruption_id"].astype(str))[names]
    values = values.loc[:, values.notna().any() & (values.nunique() > 1)]  # a constant metric predicts nothing
    used = {m: directions[m] for m in values.columns}
    pairs = pd.read_parquet(out / "pairs.parquet")
    answers = without_repeats(read_annotations(Path(answers_path), pairs), pairs)
    judgements = build_judgements(pairs, answers.loc[:, list(ANSWER_COLUMNS)])
    if judgements.empty:
        raise ValueError(f"no judgements in {answers_path}")
    cv = cross_validated_agreement(judgements, values, used, folds=folds)
    learned = fit_learned_metric(judgements, values, used)
    reports = out / REPORTS_DIR
    paths = {name: reports / f for name, f in
             (("model", MODEL_FILE), ("scores", SCORES_FILE), ("cv", CV_FILE), ("markdown", MARKDOWN_FILE))}  # fmt: skip
    atomic.write_text(paths["model"], learned.to_json())
    atomic.write_parquet(paths["scores"], pa.Table.from_pandas(learned_scores(learned, values), preserve_index=False))
    atomic.write_parquet(paths["cv"], pa.Table.from_pandas(cv, preserve_index=False))
    weights = weights_table(learned)
    markdown = "\n".join([
        "# Learned metric",
        "",
        f"Logistic (Bradley-Terry) model over differences of {len(used)} standardised metrics, fitted on "
        f"{int((judgements['choice'] != 'equal').sum())} decisive of {len(judgements)} judgements "
        f"({judgements['rater_id'].nunique()} raters; repeats counted once).",
        "",
        "## Cross-validated agreement with the raters",
        "",
        f"{folds}-fold, grouped by model; the same held-out judgements for every row.",
        "",
        markdown_table(cv, {"metric": ("Metric", None), "agreement": ("Agreement", ".3f"),
                            "std_over_folds": ("± over folds", ".3f")}),
        "",
        "## Weights (on z-scored metrics oriented so that higher is better)",
        "",
        markdown_table(weights, {"metric": ("Metric", None), "weight": ("Weight", "+.3f")}),
    ]) + "\n"  # fmt: skip
    atomic.write_text(paths["markdown"], markdown)
    learned_row = cv[cv["metric"] == "learned"].iloc[0]
    best_single = cv[cv["metric"] != "learned"].iloc[0]
    if not quiet:
        print(f"spare-gen learn-metric: cross-validated agreement {learned_row['agreement']:.3f} "
              f"(best single metric: {best_single['metric']} {best_single['agreement']:.3f}); "
              f"top weights: {', '.join(f'{m} {w:+.2f}' for m, w in weights.head(3).itertuples(index=False))}; "
              f"model in {paths['model']}")  # fmt: skip
    return {
        **{k: str(v) for k, v in paths.items()},
        "agreement": {r.metric: float(r.agreement) for r in cv.itertuples(index=False)},
        "weights": dict(zip(learned.metrics, learned.weights)),
    }
