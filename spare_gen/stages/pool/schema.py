"""The pool stage's file names and the rows of wireframes.parquet and corruptions.parquet, declared once; the
tables' schemas are generated from them."""

from __future__ import annotations

import pyarrow as pa

from spare_gen.metrics.wireframe import get_metric_names
from spare_gen.rows import arrow_schema, column, row_type
from spare_gen.runner.isolation import Status
from spare_gen.stage_table import POOL
from spare_gen.wireframes.pairs import PAIRS_SCHEMA, PairRow  # pairs.parquet: declared with the pairs

POOL_DIR = POOL.folder
WIREFRAMES_FILE = "wireframes.parquet"
CORRUPTIONS_FILE = "corruptions.parquet"
PAIRS_FILE = "pairs.parquet"
ANNOTATION_CSV = f"{POOL_DIR}/annotation_pairs.csv"
POOL_README = f"{POOL_DIR}/README.md"

POINTS = pa.list_(pa.list_(pa.float64(), 3))
INDEX_PAIRS = pa.list_(pa.list_(pa.int64(), 2))
KINDS = pa.list_(pa.uint8())

GRAPH_COLUMNS = [
    ("vertices", list, column(POINTS)),  # normalised coordinates: bbox centre at 0, bbox diagonal of the GT = 1
    ("edges", list, column(INDEX_PAIRS)),  # undirected, indices into vertices
    ("vertex_kinds", list, column(KINDS)),  # 0 CORNER (B-rep vertex), 1 CURVE (inner point of a curved edge);
    # houses: 2 RIDGE, 3 EAVE (B-rep vertices too; spare_gen.wireframe)
    ("n_vertices", int, column(pa.int32())),
    ("n_edges", int, column(pa.int32())),
]

WireframeRow = row_type("WireframeRow", [
    ("model_id", str, column(pa.string())),
    ("status", Status, column(pa.string())),  # ok | failed | timeout | crashed
    ("error", str, column(pa.string())),
    *GRAPH_COLUMNS,
    ("n_corners", int, column(pa.int32())),
    ("centre", list, column(pa.list_(pa.float64(), 3))),  # model units = vertices * scale + centre
    ("scale", float, column(pa.float64())),  # model-space bounding-box diagonal of the wireframe
    ("dropped_edges", str, column(pa.string())),  # JSON {reason: count} of B-rep edges without a line
], "One row of wireframes.parquet: a model's ground-truth wireframe (graph normalised to its bounding box).")
WIREFRAMES_SCHEMA = arrow_schema(WireframeRow)


# Corner / edge precision, recall and F1 use the pool's thresholds; the rest of the metric registry
# (spare_gen.metrics.wireframe.METRICS) uses its own defaults. All are (prediction = variant, truth = GT).
THRESHOLD_METRICS = tuple(f"{family}_{part}" for family in ("corner", "edge") for part in ("precision", "recall", "f1"))
METRIC_COLUMNS = THRESHOLD_METRICS + tuple(m for m in get_metric_names() if m not in THRESHOLD_METRICS)

# pictures (two views over a legend) and geometry files (spare_gen.wireframes.pictures.GEOMETRY_FORMAT)
PICTURE_COLUMNS = (
    "overlay_svg", "overlay_png", "alone_svg", "alone_png", "gt_svg", "gt_png", "geometry_json", "gt_json",
)  # fmt: skip

CorruptionRow = row_type("CorruptionRow", [
    ("corruption_id", str, column(pa.string())),  # opaque f"{model_id}-{10 hex}" (variants.corruption_id)
    ("model_id", str, column(pa.string())),
    ("kind", str, column(pa.string())),  # a corruption kind, or "method:<name>" for an imported prediction
    ("severity", str, column(pa.string())),  # low | medium | high; null for a prediction
    ("seed", int, column(pa.uint64())),  # derive_seed(config seed, "corruption", model_id, kind, severity);
    # predictions: derive_seed(config seed, "prediction", model_id, kind)
    ("status", Status, column(pa.string())),  # ok | failed (the corruption does not apply; a prediction file is
    # unusable)
    ("error", str, column(pa.string())),
    *GRAPH_COLUMNS,
    *[(name, float, column(pa.float64())) for name in METRIC_COLUMNS],
    *[(name, str, column(pa.string())) for name in PICTURE_COLUMNS],  # paths relative to the dataset root
], "One row of corruptions.parquet: a variant (or imported prediction) of a ground truth, its metrics, pictures.")
CORRUPTIONS_SCHEMA = arrow_schema(CorruptionRow)
