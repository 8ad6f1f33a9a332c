"""The corruptions of one ground truth, their metric scores and rows: the pool's per-model library.

Each (kind, severity) corruption draws from its own generator ``derive_rng(seed, "corruption", model_id,
kind, severity)``, so a corruption depends only on the config seed, its ground truth and its name, never
on which other models or corruptions are made, or where. The Dask task of the corruptions stage only
calls :func:`model_corruption_rows`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spare_gen.config.schema import PredictionUnits
from spare_gen.metrics.catalog import corner_prf, edge_prf, evaluate_all
from spare_gen.rng import derive_rng, derive_seed
from spare_gen.rating.corruptions import SEVERITIES, corrupt, get_corruption_names
from spare_gen.runner.isolation import Status
from spare_gen.wireframe import Wireframe
from spare_gen.rating.pictures import write_model_pictures
from spare_gen.rating.predictions import METHOD_PREFIX, read_prediction
from spare_gen.stages.pool.schema import METRIC_COLUMNS, PICTURE_COLUMNS, THRESHOLD_METRICS, CorruptionRow

RNG_STAGE = "corruption"  # the stage key of every corruption's generator
ID_STAGE = "candidate-id"  # the stage key of the generator that names a candidate


def corruption_id(seed: int, model_id: str, kind: str, severity: str | None) -> str:
    """An opaque id ``<model_id>-<10 hex digits>`` drawn from ``derive_rng(seed, "candidate-id", model_id,
    kind, severity)``: stable for a config, but neither the id nor the picture file names built from it
    tell a rater the candidate's type or severity (that mapping lives in corruptions.parquet only)."""
    keys = (ID_STAGE, model_id, kind) if severity is None else (ID_STAGE, model_id, kind, severity)
    return f"{model_id}-{int(derive_rng(seed, *keys).integers(0, 16**10)):010x}"


@dataclass(frozen=True)
class Corruption:
    """One corrupted ground truth; ``wireframe`` is None (and ``error`` says why) when the corruption
    cannot apply, e.g. removing vertices from a one-vertex wireframe."""

    corruption_id: str
    model_id: str
    kind: str  # a corruption kind, or "method:<name>" for an imported prediction
    severity: str | None  # None for a prediction
    seed: int
    wireframe: Wireframe | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.wireframe is not None


def corruption_names() -> list[tuple[str, str]]:
    """Every (kind, severity) in the order corruptions are made and stored."""
    return [(kind, severity) for kind in get_corruption_names() for severity in SEVERITIES]


def make_corruptions(gt: Wireframe, model_id: str, seed: int) -> list[Corruption]:
    """All corruptions of ``gt`` (kinds x severities)."""
    out = []
    for kind, severity in corruption_names():
        keys = (RNG_STAGE, model_id, kind, severity)
        try:
            wf, error = corrupt(gt, kind, severity, derive_rng(seed, *keys)), ""
        except ValueError as exc:
            wf, error = None, str(exc)
        out.append(Corruption(corruption_id(seed, model_id, kind, severity), model_id, kind, severity,
                           derive_seed(seed, *keys), wf, error))
    return out


def load_predictions(
    model_id: str, seed: int, predictions: list[dict], units: PredictionUnits, centre, scale: float | None
) -> list[Corruption]:
    """Imported predictions of one model (dicts with method, path) as candidates; a file that cannot be
    read is a failed candidate whose error names the file and the problem."""
    out = []
    for p in predictions:
        kind = f"{METHOD_PREFIX}{p['method']}"
        try:
            wf, error = read_prediction(p["path"], units, centre, scale), ""
        except (OSError, ValueError) as exc:
            wf, error = None, f"{p['path']}: {exc}"
        out.append(Corruption(corruption_id(seed, model_id, kind, None), model_id, kind, None,
                           derive_seed(seed, "prediction", model_id, kind), wf, error))
    return out


def score_corruption(pred: Wireframe, gt: Wireframe, corner_threshold: float, edge_threshold: float) -> dict[str, float]:
    """Every metric column of corruptions.parquet: corner / edge P/R/F1 at the pool thresholds, the rest
    from the metric registry at its defaults."""
    scores = {f"corner_{k}": v for k, v in corner_prf(pred, gt, threshold=corner_threshold).items()}
    scores.update({f"edge_{k}": v for k, v in edge_prf(pred, gt, threshold=edge_threshold).items()})
    others = [name for name in METRIC_COLUMNS if name not in THRESHOLD_METRICS]
    scores.update(evaluate_all(pred, gt, others))
    return {name: float(scores[name]) for name in METRIC_COLUMNS}


def corruption_row(corruption: Corruption, scores: dict[str, float] | None, pictures: dict[str, str] | None) -> dict:
    """A corruptions.parquet row (metric and picture columns null for a failed corruption)."""
    graph = corruption.wireframe.to_row() if corruption.ok and corruption.wireframe is not None else {}
    # the graph, then the columns the metric registry and the pictures name
    named: dict[str, Any] = {**graph, **{name: (scores or {}).get(name) for name in METRIC_COLUMNS},
                             **{name: (pictures or {}).get(name) for name in PICTURE_COLUMNS}}
    return CorruptionRow(
        corruption_id=corruption.corruption_id, model_id=corruption.model_id, kind=corruption.kind,
        severity=corruption.severity, seed=corruption.seed, status=Status.OK if corruption.ok else Status.FAILED,
        error=corruption.error, **named,
    ).as_dict()


def model_corruption_rows(
    gt_row: dict,
    seed: int,
    *,
    corner_threshold: float,
    edge_threshold: float,
    image_size: int,
    out_dir: str | Path | None,
    predictions: Sequence[dict] = (),
    prediction_units: PredictionUnits = PredictionUnits.MODEL,
) -> list[dict]:
    """Rows of one ground truth (a wireframes.parquet row, with centre and scale when there are
    predictions in model units): corruptions, imported predictions (dicts with method, path), scores, and
    pictures under ``<out_dir>/pool/<model_id>/`` (no pictures when ``out_dir`` is None)."""
    gt = Wireframe.from_row(gt_row).validate()
    model_id = str(gt_row["model_id"])
    corruptions = make_corruptions(gt, model_id, seed)
    if predictions:
        corruptions += load_predictions(model_id, seed, list(predictions), prediction_units,
                                     gt_row.get("centre"), gt_row.get("scale"))  # fmt: skip
    pictures: dict[str, dict[str, str]] = {}
    if out_dir is not None:
        pictures = write_model_pictures(Path(out_dir), model_id, gt, corruptions, image_size)
    rows = []
    for v in corruptions:
        scores = None
        if v.wireframe is not None:
            try:
                scores = score_corruption(v.wireframe, gt, corner_threshold, edge_threshold)
            except (ValueError, FloatingPointError) as exc:  # a prediction no metric can score
                if v.severity is not None:
                    raise
                v = replace(v, wireframe=None, error=f"cannot score the prediction: {exc}")
        rows.append(corruption_row(v, scores, pictures.get(v.corruption_id) if v.ok else None))
    return rows
