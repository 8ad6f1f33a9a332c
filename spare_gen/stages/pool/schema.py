"""The pool stage's file names and the rows of wireframes.parquet and corruptions.parquet, declared once; the
tables' schemas are generated from them."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from spare_gen.metrics.catalog import get_metric_names
from spare_gen.rows import Row, arrow_schema, column, extend_row
from spare_gen.runner.isolation import Status
from spare_gen.stage_table import POOL
from spare_gen.rating.pairs import PAIRS_SCHEMA, PairRow  # pairs.parquet: declared with the pairs

POOL_DIR = POOL.folder
WIREFRAMES_FILE = "wireframes.parquet"
CORRUPTIONS_FILE = "corruptions.parquet"
PAIRS_FILE = "pairs.parquet"
RATING_PAIRS_CSV = f"{POOL_DIR}/annotation_pairs.csv"
POOL_README = f"{POOL_DIR}/README.md"

POINTS = pa.list_(pa.list_(pa.float64(), 3))
INDEX_PAIRS = pa.list_(pa.list_(pa.int64(), 2))
KINDS = pa.list_(pa.uint8())


@dataclass(frozen=True, kw_only=True)
class WireframeRow(Row):
    """One row of wireframes.parquet: a model's ground-truth wireframe (graph normalised to its bounding box)."""

    model_id: str | None = column(pa.string())
    status: Status | None = column(pa.string())  # ok | failed | timeout | crashed
    error: str | None = column(pa.string())
    # the graph (the same columns and types as CorruptionRow's: tests/test_typed_rows.py)
    vertices: list | None = column(POINTS)  # normalised coordinates: bbox centre at 0, bbox diagonal of the GT = 1
    edges: list | None = column(INDEX_PAIRS)  # undirected, indices into vertices
    vertex_kinds: list | None = column(KINDS)  # 0 CORNER (B-rep vertex), 1 CURVE (inner point of a curved edge);
    # houses: 2 RIDGE, 3 EAVE (B-rep vertices too; spare_gen.wireframe)
    n_vertices: int | None = column(pa.int32())
    n_edges: int | None = column(pa.int32())
    n_corners: int | None = column(pa.int32())
    centre: list | None = column(pa.list_(pa.float64(), 3))  # model units = vertices * scale + centre
    scale: float | None = column(pa.float64())  # model-space bounding-box diagonal of the wireframe
    dropped_edges: str | None = column(pa.string())  # JSON {reason: count} of B-rep edges without a line


WIREFRAMES_SCHEMA = arrow_schema(WireframeRow)


# Corner / edge precision, recall and F1 use the pool's thresholds; the rest of the metric registry
# (spare_gen.metrics.catalog.METRICS) uses its own defaults. All are (prediction = corruption, truth = GT).
THRESHOLD_METRICS = tuple(f"{family}_{part}" for family in ("corner", "edge") for part in ("precision", "recall", "f1"))
METRIC_COLUMNS = THRESHOLD_METRICS + tuple(m for m in get_metric_names() if m not in THRESHOLD_METRICS)

# pictures (two views over a legend) and geometry files (spare_gen.rating.pictures.GEOMETRY_FORMAT)
PICTURE_COLUMNS = (
    "overlay_svg", "overlay_png", "alone_svg", "alone_png", "gt_svg", "gt_png", "geometry_json", "gt_json",
)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class CorruptionCore(Row):
    """The columns of corruptions.parquet before the metric registry's (``CorruptionRow`` appends those and the
    pictures)."""

    corruption_id: str | None = column(pa.string())  # opaque f"{model_id}-{10 hex}" (corruptions.corruption_id)
    model_id: str | None = column(pa.string())
    kind: str | None = column(pa.string())  # a corruption kind, or "method:<name>" for an imported prediction
    severity: str | None = column(pa.string())  # low | medium | high; null for a prediction
    seed: int | None = column(pa.uint64())  # derive_seed(config seed, "corruption", model_id, kind, severity);
    # predictions: derive_seed(config seed, "prediction", model_id, kind)
    status: Status | None = column(pa.string())  # ok | failed (the corruption does not apply; a prediction file is
    # unusable)
    error: str | None = column(pa.string())
    # the graph, as in WireframeRow
    vertices: list | None = column(POINTS)
    edges: list | None = column(INDEX_PAIRS)
    vertex_kinds: list | None = column(KINDS)
    n_vertices: int | None = column(pa.int32())
    n_edges: int | None = column(pa.int32())


CorruptionRow = extend_row("CorruptionRow", CorruptionCore, [
    *[(name, float | None, column(pa.float64())) for name in METRIC_COLUMNS],
    *[(name, str | None, column(pa.string())) for name in PICTURE_COLUMNS],  # paths relative to the dataset root
], "One row of corruptions.parquet: a corruption (or imported prediction) of a ground truth, its metrics, pictures.")
CORRUPTIONS_SCHEMA = arrow_schema(CorruptionRow)
