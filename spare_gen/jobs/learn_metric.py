"""`spare-gen learn-metric OUT ANSWERS.csv`: learn which combination of metrics predicts the raters.

Reads ``<out>/pairs.parquet``, ``<out>/corruptions.parquet`` (the metric columns) and the answers (a CSV
or a folder of CSVs, through the answers reader; repeats count once). Writes to ``<out>/reports/``:
``learned_metric.json`` (the model: metrics, orientation, standardisation, weights), ``learned_scores.parquet``
(corruption_id, learned; `spare-gen rank` then adds a ``learned`` column to its metric tables),
``learned_metric_cv.parquet`` and ``learned_metric.md`` (cross-validated agreement of the learned metric and of
every single metric). Every file is written atomically.

``--features image`` (:func:`run_image`, needs the torch extra) is the paper's learned metric instead
(:mod:`spare_gen.ranking.image_metric`): it also reads ``<out>/wireframes.parquet`` and writes
``learned_image_metric.json`` (settings), ``learned_image_head.pt`` (the MLP head and its feature
standardisation), ``learned_image_scores.parquet`` (corruption_id, learned_image; `spare-gen rank` adds the
column), ``learned_image_cv.parquet`` / ``learned_image_folds.parquet`` (held-out accuracy and agreement of
it, the metric-feature model and every single metric, overall and per fold) and ``learned_image_metric.md``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen import atomic
from spare_gen.store.inventory import REPORTS_DIR
from spare_gen.ranking.agreement import metric_directions
from spare_gen.ranking.judgements import CORRUPTION_COLUMNS, build_judgements
from spare_gen.ranking.learned import (
    DEFAULT_FOLDS,
    LEARNED_NAME,
    cross_validated_agreement,
    fit_learned_metric,
    learned_scores,
    select_metrics,
    weights_table,
)
from spare_gen.ranking.raters import without_repeats
from spare_gen.ranking.report import markdown_table
from spare_gen.runner.isolation import Status
from spare_gen.rating.pairs import ANSWER_COLUMNS, read_answers
from spare_gen.wireframe import Wireframe

if TYPE_CHECKING:
    from spare_gen.ranking.image_metric import ImageSettings

MODEL_FILE = "learned_metric.json"
SCORES_FILE = "learned_scores.parquet"
CV_FILE = "learned_metric_cv.parquet"
MARKDOWN_FILE = "learned_metric.md"


def _inputs(out: Path, answers_path: str | os.PathLike, metrics: Sequence[str] | None):
    """(judgements, metric values indexed by corruption id, metric -> higher is better) of a pool and its answers."""
    for path in (out / "pairs.parquet", out / "corruptions.parquet", Path(answers_path)):
        if not path.exists():
            raise FileNotFoundError(f"learn-metric needs {path}, which does not exist")
    directions = metric_directions()
    present = set(pq.read_schema(out / "corruptions.parquet").names)
    available = [m for m in directions if m in present]
    names = select_metrics(available, metrics)
    corruptions = pd.read_parquet(out / "corruptions.parquet", columns=[CORRUPTION_COLUMNS[0], *names])
    values = corruptions.set_index(corruptions["corruption_id"].astype(str))[names]
    values = values.loc[:, values.notna().any() & (values.nunique() > 1)]  # a constant metric predicts nothing
    used = {m: directions[m] for m in values.columns}
    pairs = pd.read_parquet(out / "pairs.parquet")
    answers = without_repeats(read_answers(Path(answers_path), pairs), pairs)
    judgements = build_judgements(pairs, answers.loc[:, list(ANSWER_COLUMNS)])
    if judgements.empty:
        raise ValueError(f"no judgements in {answers_path}")
    return judgements, values, used


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
    judgements, values, used = _inputs(out, answers_path, metrics)
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
              f"wrote {', '.join(str(p) for p in paths.values())}")  # fmt: skip
    return {
        **{k: str(v) for k, v in paths.items()},
        "agreement": {r.metric: float(r.agreement) for r in cv.itertuples(index=False)},
        "weights": dict(zip(learned.metrics, learned.weights)),
    }


IMAGE_MODEL_FILE = "learned_image_metric.json"
IMAGE_HEAD_FILE = "learned_image_head.pt"
IMAGE_SCORES_FILE = "learned_image_scores.parquet"
IMAGE_CV_FILE = "learned_image_cv.parquet"
IMAGE_FOLDS_FILE = "learned_image_folds.parquet"
IMAGE_MARKDOWN_FILE = "learned_image_metric.md"
GRAPH_COLUMNS = ("vertices", "edges", "vertex_kinds")


def image_settings(
    backbone: str | None, image_size: int | None, folds: int | None, seed: int, threads: int | None,
    epochs: int | None,
) -> "ImageSettings":
    """The image metric's settings from command-line values (None: the default); needs the torch extra."""
    from spare_gen.ranking import image_metric as im  # needs the torch extra: imported only for --features image

    for name, value, low in (("--image-size", image_size, 14), ("--folds", folds, 2 * im.METHOD_GROUPS),
                             ("--threads", threads, 1),
                             ("--epochs", epochs, 1)):  # fmt: skip
        if value is not None and value < low:
            raise ValueError(f"learn-metric {name} must be at least {low}, got {value}")
    head = im.HeadSettings() if epochs is None else replace(im.HeadSettings(), epochs=epochs)
    return im.ImageSettings(backbone=backbone or im.DEFAULT_BACKBONE, image_size=image_size or im.DEFAULT_IMAGE_SIZE,
                            folds=folds or im.DEFAULT_FOLDS, seed=seed, head=head,
                            **({"threads": threads} if threads else {}))  # fmt: skip


def _wireframes(table: pd.DataFrame, key: str) -> dict[str, Wireframe]:
    return {str(r[key]): Wireframe.from_row(r) for r in table.to_dict("records")}


def run_image(
    out_dir: str | os.PathLike,
    answers_path: str | os.PathLike,
    settings: "ImageSettings",
    *,
    metrics: Sequence[str] | None = None,
    quiet: bool = False,
) -> dict:
    """The paper's learned metric (``spare_gen.ranking.image_metric``): cross-validate, fit on every judgement,
    score every corruption, and write the reports beside the metric-feature model's."""
    from spare_gen.ranking import image_metric as im  # needs the torch extra: imported only for --features image

    out = Path(out_dir)
    judgements, values, used = _inputs(out, answers_path, metrics)
    corruptions, gt_of = _judged_pictures(out, judgements)
    ids = corruptions["corruption_id"].astype(str).tolist()
    candidates = list(zip(corruptions["model_id"].astype(str), _wireframes(corruptions, "corruption_id").values()))
    on = im.device()
    with im.torch_determinism(settings.threads):
        # transformers declares PreTrainedModel.to with @functools.wraps, whose typeshed type (_Wrapped) is no
        # descriptor: mypy checks ``on`` as the unbound ``self``
        backbone = im.load_backbone(settings.backbone, settings.seed).to(on)  # type: ignore[arg-type]
        features = im.picture_features(backbone, gt_of, candidates, settings.image_size, on)
        cv, per_fold = im.cross_validate(features, ids, judgements, im.method_labels(corruptions), values, used, settings)
        final = im.train_head(features, judgements, pd.Series(np.arange(len(ids)), index=ids), settings.head,
                              settings.seed, "all", on=on)
        scores = pd.DataFrame({"corruption_id": ids, im.IMAGE_NAME: final.score(features)})
    reports = out / REPORTS_DIR
    paths = {name: reports / f for name, f in
             (("model", IMAGE_MODEL_FILE), ("head", IMAGE_HEAD_FILE), ("scores", IMAGE_SCORES_FILE),
              ("cv", IMAGE_CV_FILE), ("folds", IMAGE_FOLDS_FILE), ("markdown", IMAGE_MARKDOWN_FILE))}  # fmt: skip
    atomic.write_text(paths["model"], im.settings_json(settings, im.backbone_info(backbone)))
    atomic.write_bytes(paths["head"], final.to_bytes())
    atomic.write_parquet(paths["scores"], pa.Table.from_pandas(scores, preserve_index=False))
    atomic.write_parquet(paths["cv"], pa.Table.from_pandas(cv, preserve_index=False))
    atomic.write_parquet(paths["folds"], pa.Table.from_pandas(per_fold, preserve_index=False))
    n_folds = int(per_fold["fold"].nunique())
    atomic.write_text(paths["markdown"], _image_markdown(settings, judgements, cv, n_folds,
                                                         im.CANONICAL_VIEW.name, im.IMAGE_NAME))
    if not quiet:
        _print_image_summary(cv, n_folds, paths["scores"], im.IMAGE_NAME)
    return {
        **{k: str(v) for k, v in paths.items()},
        "accuracy": {r.metric: float(r.accuracy) for r in cv.itertuples(index=False)},
    }


def _judged_pictures(out: Path, judgements: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Wireframe]]:
    """The usable corruptions (sorted by id) whose ground truth has a wireframe, and those ground truths; every
    judged corruption must be among them."""
    if not (out / "wireframes.parquet").is_file():
        raise FileNotFoundError(f"learn-metric --features image needs {out / 'wireframes.parquet'}, which does not exist")
    corruptions = pd.read_parquet(out / "corruptions.parquet",
                               columns=["corruption_id", "model_id", "kind", "severity", "status", *GRAPH_COLUMNS])
    corruptions = corruptions[corruptions["status"] == Status.OK].sort_values("corruption_id", kind="stable")
    gts = pd.read_parquet(out / "wireframes.parquet", columns=["model_id", "status", *GRAPH_COLUMNS])
    gt_of = _wireframes(gts[gts["status"] == Status.OK], "model_id")
    corruptions = corruptions[corruptions["model_id"].astype(str).isin(gt_of)]
    judged = set(judgements["left_id"].astype(str)) | set(judgements["right_id"].astype(str))
    unknown = sorted(judged - set(corruptions["corruption_id"].astype(str)))
    if unknown:
        raise ValueError(f"learn-metric: judged corruption {unknown[0]!r} has no usable wireframe in corruptions.parquet")
    return corruptions, gt_of


def _image_markdown(settings: "ImageSettings", judgements: pd.DataFrame, cv: pd.DataFrame, n_folds: int,
                    view: str, image_name: str) -> str:
    return "\n".join([
        "# Learned metric from pictures (DINOv2 features, MLP head, Bradley-Terry loss)",
        "",
        f"Backbone `{settings.backbone}` (frozen), pictures {settings.image_size} px from the `{view}` "
        f"view, features: class token and mean patch token; head: MLP with {settings.head.hidden} hidden units, "
        f"{settings.head.epochs} epochs, batch {settings.head.batch_size}. Fitted on "
        f"{int((judgements['choice'] != 'equal').sum())} decisive of {len(judgements)} judgements "
        f"({judgements['rater_id'].nunique()} raters; repeats counted once).",
        "",
        "## Cross-validated accuracy with the raters",
        "",
        f"{n_folds} folds; models and methods (corruption kind/severity) disjoint between training and test; "
        "every row is scored on the same held-out judgements. Accuracy: decisive judgements whose winner scores "
        f"higher (the paper's measure); agreement: all judgements, 1 / 0.5 / 0. `{image_name}` is this model, "
        f"`{LEARNED_NAME}` the metric-feature model refitted per fold.",
        "",
        markdown_table(cv, {"metric": ("Metric", None), "accuracy": ("Accuracy", ".3f"),
                            "accuracy_std_over_folds": ("± over folds", ".3f"), "agreement": ("Agreement", ".3f")}),
    ]) + "\n"  # fmt: skip


def _print_image_summary(cv: pd.DataFrame, n_folds: int, scores_path: Path, image_name: str) -> None:
    row = cv.set_index("metric")
    singles = cv[~cv["metric"].isin([image_name, LEARNED_NAME])]
    best = f"best single metric: {singles.iloc[0]['metric']} {singles.iloc[0]['accuracy']:.3f}" if len(singles) else ""
    print(f"spare-gen learn-metric: cross-validated accuracy {row.loc[image_name, 'accuracy']:.3f} "
          f"over {n_folds} model- and method-disjoint folds ({best}"
          + (f"; metric-feature model {row.loc[LEARNED_NAME, 'accuracy']:.3f}" if LEARNED_NAME in row.index else "")
          + f"); scores in {scores_path}")  # fmt: skip

