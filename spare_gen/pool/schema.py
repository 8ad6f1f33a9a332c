"""The pool stage's file names and the schemas of wireframes.parquet and corruptions.parquet, declared once."""

from __future__ import annotations

import pyarrow as pa

from spare_gen.metrics.wireframe import get_metric_names

POOL_DIR = "pool"
WIREFRAMES_FILE = "wireframes.parquet"
CORRUPTIONS_FILE = "corruptions.parquet"
PAIRS_FILE = "pairs.parquet"
ANNOTATION_CSV = f"{POOL_DIR}/annotation_pairs.csv"
POOL_README = f"{POOL_DIR}/README.md"

POINTS = pa.list_(pa.list_(pa.float64(), 3))
INDEX_PAIRS = pa.list_(pa.list_(pa.int64(), 2))
KINDS = pa.list_(pa.uint8())

GRAPH_FIELDS = [
    ("vertices", POINTS),  # normalised coordinates: bbox centre at 0, bbox diagonal of the GT = 1
    ("edges", INDEX_PAIRS),  # undirected, indices into vertices
    ("vertex_kinds", KINDS),  # 0 CORNER (B-rep vertex), 1 CURVE (inner point of a curved edge); houses: 2 RIDGE,
    # 3 EAVE (B-rep vertices too; spare_gen.wireframe)
    ("n_vertices", pa.int32()),
    ("n_edges", pa.int32()),
]

WIREFRAMES_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("status", pa.string()),  # ok | failed | timeout | crashed
        ("error", pa.string()),
        *GRAPH_FIELDS,
        ("n_corners", pa.int32()),
        ("centre", pa.list_(pa.float64(), 3)),  # model units = vertices * scale + centre
        ("scale", pa.float64()),  # model-space bounding-box diagonal of the wireframe
        ("dropped_edges", pa.string()),  # JSON {reason: count} of B-rep edges without a line
    ]
)

# Corner / edge precision, recall and F1 use the pool's thresholds; the rest of the metric registry
# (spare_gen.metrics.wireframe.METRICS) uses its own defaults. All are (prediction = variant, truth = GT).
THRESHOLD_METRICS = tuple(f"{family}_{part}" for family in ("corner", "edge") for part in ("precision", "recall", "f1"))
METRIC_COLUMNS = THRESHOLD_METRICS + tuple(m for m in get_metric_names() if m not in THRESHOLD_METRICS)

# pictures (two views over a legend) and geometry files (spare_gen.pool.pictures.GEOMETRY_FORMAT)
PICTURE_COLUMNS = (
    "overlay_svg", "overlay_png", "alone_svg", "alone_png", "gt_svg", "gt_png", "geometry_json", "gt_json",
)  # fmt: skip

CORRUPTIONS_SCHEMA = pa.schema(
    [
        ("corruption_id", pa.string()),  # opaque f"{model_id}-{10 hex}" (variants.corruption_id)
        ("model_id", pa.string()),
        ("kind", pa.string()),  # a corruption kind, or "method:<name>" for an imported prediction
        ("severity", pa.string()),  # low | medium | high; null for a prediction
        ("seed", pa.uint64()),  # derive_seed(config seed, "corruption", model_id, kind, severity); predictions:
        # derive_seed(config seed, "prediction", model_id, kind)
        ("status", pa.string()),  # ok | failed (the corruption does not apply; a prediction file is unusable)
        ("error", pa.string()),
        *GRAPH_FIELDS,
        *[(name, pa.float64()) for name in METRIC_COLUMNS],
        *[(name, pa.string()) for name in PICTURE_COLUMNS],  # paths relative to the dataset root
    ]
)
