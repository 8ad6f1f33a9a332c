"""The pool stage's driver: ground-truth wireframes (isolated OCCT child), corruptions with pictures,
annotation pairs and a contact sheet, composed by ``run_pool``.

Each step is a thin Dask wrapper around a library function (``extract_wireframe``, ``model_corruption_rows``,
``make_pairs``). ``run_pool`` assumes the models stage already ran (``models.parquet`` exists).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from spare_gen.store import shards
from spare_gen.atomic import write_bytes, write_parquet, write_text
from spare_gen.config.schema import Config
from spare_gen.filehash import sha256_file
from spare_gen.stages.models.schema import MODELS_FILE, MODELS_SCHEMA, ModelRow
from spare_gen.store.shards import rows_to_table
from spare_gen.rows import rows_from_table
from spare_gen.runner.contract import RunOptions, Summary
from spare_gen.runner.isolation import Status
from spare_gen.runner.stage import run_stage, status_summary
from spare_gen.rating.corruptions import SEVERITIES, get_corruption_names
from spare_gen.rating.pairs import ANSWERS_FORMAT, export_rating_pairs_csv, make_pairs, pairs_to_arrow
from spare_gen.rating.pictures import GEOMETRY_FORMAT, contact_sheet, contact_sheet_svg
from spare_gen.rating.predictions import PREDICTIONS_FORMAT, discover
from spare_gen.stages.pool.schema import (
    RATING_PAIRS_CSV, CORRUPTIONS_FILE, CORRUPTIONS_SCHEMA, PAIRS_FILE, POOL_README, WIREFRAMES_FILE,
    WIREFRAMES_SCHEMA, WireframeRow,
)
from spare_gen.stages.pool.settings import CorruptionSettings, CorruptionUnit, WireframeSettings, WireframeUnit
from spare_gen.stages.pool.worker import corruption_task, wireframe_task
from spare_gen.stage_table import POOL



def pool_models(out: Path, count: int) -> list[ModelRow]:
    """The first ``count`` usable models (status ok in models.parquet, model_id order); 0 = all.

    Only ``model_id``, ``status``, ``brep_path`` and ``house`` (a procedural house's description, JSON) are read.
    """
    columns = ["model_id", "status", "brep_path"]
    has_house = "house" in shards.schema(out / MODELS_FILE, MODELS_SCHEMA).names  # tables written before houses
    table = shards.read(out / MODELS_FILE, columns=columns + ["house"] * has_house)
    usable = sorted((r for r in rows_from_table(ModelRow, table) if r.status == Status.OK),
                    key=lambda r: str(r.model_id))
    return usable[:count] if count else usable


# ------------------------------------------------------------------------------------------ wireframes


def wireframe_unit(out: Path, model: ModelRow) -> WireframeUnit:
    """The wireframes unit of one ``pool_models`` row (a house carries its description, for its vertex kinds)."""
    unit: WireframeUnit = {"unit_id": str(model.model_id), "model_id": str(model.model_id),
                           "shape_path": str(out.resolve() / str(model.brep_path))}
    if model.house:
        unit["house"] = model.house
    return unit


def wireframe_units(out: Path, count: int) -> list[WireframeUnit]:
    return [wireframe_unit(out, m) for m in pool_models(out, count)]


def run_wireframes(client, config: Config, out: Path) -> pa.Table:
    results = run_stage(client, wireframe_task, wireframe_units(out, config.pool.models),
                        WireframeSettings.from_config(config, out), RunOptions.from_config(config))
    table = rows_to_table([r.row.as_dict() for r in results], WIREFRAMES_SCHEMA)
    write_parquet(out / WIREFRAMES_FILE, table)
    return table


# ----------------------------------------------------------------------------------------- corruptions


def run_corruptions(client, config: Config, out: Path, wireframes: pa.Table) -> pa.Table:
    gts = [r for r in rows_from_table(WireframeRow, wireframes) if r.status == Status.OK]
    predictions = pool_predictions(config, {str(g.model_id) for g in gts})
    units: list[CorruptionUnit] = [
        {"unit_id": str(g.model_id), "model_id": str(g.model_id), "gt": _ground_truth(g),
         "predictions": predictions.get(str(g.model_id), [])} for g in gts]
    settings = CorruptionSettings.from_config(config, out, predictions_digest(predictions))
    results = run_stage(client, corruption_task, units, settings, RunOptions.from_config(config))
    for r in results:  # a bug, not bad input (bad input gives failed corruption rows): report it, keep the rest
        if r.status != Status.OK:
            print(f"spare-gen: corruptions: model {r.unit_id} failed: {r.error}", file=sys.stderr)
    rows = [row for r in results for row in r.rows]
    for row in rows:  # a prediction file that could not be read or scored: one line each, the rest goes on
        if row["severity"] is None and row["status"] != Status.OK:
            print(f"spare-gen: predictions: {row['error']}", file=sys.stderr)
    table = rows_to_table(rows, CORRUPTIONS_SCHEMA)
    write_parquet(out / CORRUPTIONS_FILE, table)
    return table


def _ground_truth(gt: WireframeRow) -> dict:
    """What a corruptions unit reads of its ground truth: the graph and its frame."""
    return {"model_id": gt.model_id, "vertices": gt.vertices, "edges": gt.edges, "vertex_kinds": gt.vertex_kinds,
            "centre": gt.centre, "scale": gt.scale}


def predictions_digest(predictions: dict[str, list[dict]]) -> dict[str, str]:
    """``method/model_id`` -> content hash of every prediction file, for the stage's settings fingerprint."""
    return {f"{p['method']}/{m}": sha256_file(p["path"]) for m, files in sorted(predictions.items()) for p in files}


def pool_predictions(config: Config, model_ids: set[str]) -> dict[str, list[dict]]:
    """model_id -> [{method, path}] of ``pool.predictions`` (none when unset); unusable files and folders
    are reported on one line each."""
    if not config.pool.predictions:
        return {}
    found, problems = discover(config.pool.predictions, model_ids)
    for problem in problems:
        print(f"spare-gen: predictions: {problem}", file=sys.stderr)
    by_model: dict[str, list[dict]] = {}
    for f in found:
        by_model.setdefault(f.model_id, []).append({"method": f.method, "path": str(Path(f.path).resolve())})
    return by_model


# --------------------------------------------------------------------------------------------- pairs

README_TEXT = """\
# Corrupted-wireframe pool: annotation pairs

Each picture shows one candidate (blue) over its ground-truth wireframe (black) in two orthographic
views side by side (trimetric, from front-right-top and back-left-top) over a legend: every vertex has a
small square marker, isolated vertices (no edge) an orange ring. All pictures of one model share one
camera per view, framing the ground truth's box padded so that no vertex of a corruption
leaves the picture. Files per model in `pool/<model_id>/`: `<corruption_id>_overlay.svg|png`
(candidate over the ground truth, shown to raters), `<corruption_id>_alone.svg|png` (candidate
alone), `<corruption_id>.json` (its geometry), and `gt.svg|png|json`. Candidate ids are opaque
random ids: the type and severity of each candidate are only in `corruptions.parquet` (kind,
severity, seed, wireframe, metric scores) and `pairs.parquet`, so nothing a rater sees names them.

{geometry}
Show raters the pairs of `pool/annotation_pairs.csv` in file order and ask, for each pair, which
side matches the superimposed ground truth more closely. `pairs.parquet` also holds each pair's
type (regular; sanity = low vs high severity of one kind, known winner; repeat = an earlier pair
again with sides swapped) for checking rater reliability.

{format}
{predictions}
Then rank the corruption types, check the raters and compare the metrics with human judgement:

    spare-gen rank <dataset folder> answers.csv

## Effect of each severity on this pool

Corruption magnitudes are in units of each ground truth's bounding-box diagonal (the severity table
at the top of `spare_gen/rating/corruptions.py`). Median (10th-90th percentile) over this pool's
models of the scores against the ground truth (corner and edge F1 at the pool thresholds, WED). The
metric each family targets: edge F1 for deform and add, vertex F1 over all vertices for perturb and
remove (`spare_gen/rating/calibration.py`); imported predictions appear as `method:<name>`:

{effects}
"""

EFFECT_METRICS = ("corner_f1", "edge_f1", "wed")


def effect_table(corruptions: pa.Table) -> str:
    """Markdown table: per candidate type, how many and the median (10th-90th percentile) of each effect metric."""
    frame = corruptions.select(["kind", "severity", "status", *EFFECT_METRICS]).to_pandas()
    frame = frame[frame["status"] == Status.OK]
    head = "| kind | severity | n | " + " | ".join(EFFECT_METRICS) + " |\n"
    head += "|---|---|---|" + "---|" * len(EFFECT_METRICS) + "\n"
    lines = []
    for (kind, severity), group in frame.groupby(["kind", frame["severity"].fillna("")], sort=False):
        cells = []
        for metric in EFFECT_METRICS:
            values = group[metric].dropna().to_numpy(dtype=float)
            if len(values):
                lo, mid, hi = np.percentile(values, [10, 50, 90])
                cells.append(f"{mid:.3f} ({lo:.3f}-{hi:.3f})")
            else:
                cells.append("-")
        lines.append(f"| {kind} | {severity or '-'} | {len(group)} | " + " | ".join(cells) + " |")
    return head + "\n".join(lines) + "\n"


def corruptions_frame(corruptions: pa.Table) -> pd.DataFrame:
    """Variants the raters can see (status ok), with ``png`` = the overlay picture, for the pairs module."""
    cols = ["corruption_id", "model_id", "kind", "severity", "status", "overlay_png"]
    frame = corruptions.select(cols).to_pandas()
    frame = frame[frame["status"] == Status.OK].drop(columns="status")
    return frame.rename(columns={"overlay_png": "png"}).reset_index(drop=True)


def run_pairs(config: Config, out: Path, corruptions: pa.Table) -> pd.DataFrame:
    """pairs.parquet, the annotation tool's CSV and the pool README (runs on the client: it is cheap)."""
    pairs = make_pairs(
        corruptions_frame(corruptions), config.seed,
        max_pairs_per_model=config.pool.max_pairs_per_model or None, repeat_fraction=config.pool.repeat_fraction,
    )
    write_parquet(out / PAIRS_FILE, pairs_to_arrow(pairs))
    export_rating_pairs_csv(pairs, out / RATING_PAIRS_CSV)
    readme = README_TEXT.format(format=ANSWERS_FORMAT, geometry=GEOMETRY_FORMAT, predictions=PREDICTIONS_FORMAT,
                                effects=effect_table(corruptions))  # fmt: skip
    write_text(out / POOL_README, readme)
    return pairs


def summary(wireframes: pa.Table, corruptions: pa.Table, pairs: pd.DataFrame) -> str:
    text = status_summary("wireframes", wireframes.column("status").to_pylist())
    corruption_status = Counter(corruptions.column("status").to_pylist())
    types = Counter(pairs["pair_type"]) if len(pairs) else Counter()
    return (f"pool: {text}; variants {json.dumps(dict(sorted(corruption_status.items())))}; "
            f"pairs {len(pairs)} {json.dumps(dict(sorted(types.items())))}")  # fmt: skip


# ------------------------------------------------------------------------------------------ the pool job

PREVIEW, PREVIEW_SVG = "preview/corruptions.png", "preview/corruptions.svg"  # the sheet and its vector twin


def write_preview(out: Path, wireframes: pa.Table, corruptions: pa.Table) -> Path | None:
    """Contact sheet (kinds x severities, PNG and SVG) of the model with the most corners among those whose corruptions
    all succeeded (ties: the first model_id), so the sheet shows as much structure as the pool has."""
    kinds, severities = get_corruption_names(), list(SEVERITIES)
    columns = ["model_id", "kind", "severity", "status", "overlay_png", "overlay_svg"]
    rows = [r for r in corruptions.select(columns).to_pylist()
            if r["kind"] in kinds]  # corruptions only, not imported predictions  # fmt: skip
    corners = {r["model_id"]: r["n_corners"] or 0 for r in wireframes.select(["model_id", "n_corners"]).to_pylist()}
    complete = []
    for model_id in sorted({r["model_id"] for r in rows}):
        mine = [r for r in rows if r["model_id"] == model_id]
        if len(mine) == len(kinds) * len(severities) and all(r["status"] == Status.OK for r in mine):
            complete.append((-corners.get(model_id, 0), model_id, mine))
    if not complete:
        return None
    _, model_id, mine = min(complete, key=lambda c: c[:2])
    cells = {(r["kind"], r["severity"]): (out / r["overlay_png"]).read_bytes() for r in mine}
    vectors = {(r["kind"], r["severity"]): (out / r["overlay_svg"]).read_text(encoding="utf-8") for r in mine}
    title = f"{model_id}: variants (blue) over the ground truth (black)"
    write_text(out / PREVIEW_SVG, contact_sheet_svg(vectors, kinds, severities, title))
    return write_bytes(out / PREVIEW, contact_sheet(cells, kinds, severities, title))


def run_pool(client, config: Config, out: Path) -> Summary:
    """Wireframes, corruptions and pairs of the first ``pool.models`` usable models; returns the summary."""
    out = Path(out)
    wireframes = run_wireframes(client, config, out)
    corruptions = run_corruptions(client, config, out, wireframes)
    pairs = run_pairs(config, out, corruptions)
    write_preview(out, wireframes, corruptions)
    return Summary(POOL.name, summary(wireframes, corruptions, pairs))
