"""Schemas of drawings.parquet (one row per model) and views.parquet (one row per model and view), declared once."""

import pyarrow as pa

from spare_gen.packed import packed_schema
from spare_gen.shards import rows_to_table  # noqa: F401 (re-exported)

# A polyline is a list of [x, y] points in canvas pixels (x right, y down, origin top-left), float32.
POLYLINES = pa.list_(pa.list_(pa.list_(pa.float32(), 2)))

VIEWS_FILE = "views.parquet"  # folders of parts (spare_gen.shards)
DRAWINGS_FILE = "drawings.parquet"
VIEWS_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("view", pa.string()),  # f r t 1..8, or rand_000.. for random views
        ("status", pa.string()),  # ok | failed | timeout | crashed | skipped (the model's)
        ("error", pa.string()),
        ("hlr_method", pa.string()),  # exact | poly: the algorithm that drew this view
        ("svg", pa.string()),  # drawings/<model_id>/<view>.svg, relative to the dataset root
        ("png", pa.string()),  # drawings/<model_id>/<view>.png (null when render.png is off)
        ("visible", POLYLINES),
        ("hidden", POLYLINES),
        ("n_visible", pa.int32()),  # number of visible polylines (HLR edges)
        ("n_hidden", pa.int32()),
        ("bbox2d", pa.list_(pa.float64(), 4)),  # [xmin, ymin, xmax, ymax] of all lines, px (null if blank)
        ("extent", pa.float64()),  # max(width, height) of bbox2d, px
        ("center2d", pa.list_(pa.float64(), 2)),  # image-plane point (model units) drawn at the canvas centre
        ("ink_fraction", pa.float64()),  # share of non-white PNG pixels
        ("png_sha256", pa.string()),
        ("svg_sha256", pa.string()),
        ("camera_rotation", pa.list_(pa.list_(pa.float64(), 3), 3)),  # world-to-camera rows (right, up, back)
        ("camera_position", pa.list_(pa.float64(), 3)),  # bbox centre + bbox diagonal x view direction
    ]
)

# render.store = "parquet": the same plus png_image (Hugging Face Image struct {bytes, path}) and svg_text
PACKED_VIEWS_SCHEMA = packed_schema(VIEWS_SCHEMA)


def views_schema(packed: bool) -> pa.Schema:
    return PACKED_VIEWS_SCHEMA if packed else VIEWS_SCHEMA


DRAWINGS_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("status", pa.string()),  # ok | failed | timeout | crashed | skipped
        ("error", pa.string()),
        ("hlr_method", pa.string()),  # exact | poly | mixed (some views fell back to poly)
        ("fallback_reason", pa.string()),  # why exact HLR was not used for (some) views
        ("scale", pa.float64()),  # canvas pixels per model unit, the same in every view
        ("center", pa.list_(pa.float64(), 3)),  # bounding-box centre, drawn at the canvas centre
        ("bbox", pa.list_(pa.float64(), 6)),  # tight box from the F/R/T drawings (xmin ymin zmin xmax ymax zmax)
        ("blank", pa.bool_()),  # some fixed view has no line
        ("blank_views", pa.list_(pa.string())),
        ("tiny", pa.bool_()),  # F, R or T drawing extent below render.tiny_fraction of the canvas
        ("tiny_views", pa.list_(pa.string())),
        ("duplicate", pa.bool_()),  # front view identical to an earlier model's (model_id order)
        ("duplicate_of", pa.string()),
        ("front_png_sha256", pa.string()),
        ("usable", pa.bool_()),  # ok and not blank, tiny or duplicate
    ]
)

TIMING_COLUMNS: tuple[str, ...] = ()  # timings live in <out>/timings/drawings.json

__all__ = ["DRAWINGS_SCHEMA", "PACKED_VIEWS_SCHEMA", "POLYLINES", "TIMING_COLUMNS", "VIEWS_SCHEMA", "rows_to_table",
           "views_schema"]
