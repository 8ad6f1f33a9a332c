"""Rows of drawings.parquet (one per model) and views.parquet (one per model and view), declared once; the
tables' schemas are generated from them."""

from dataclasses import dataclass

import pyarrow as pa

from spare_gen.store.packed import packed_schema
from spare_gen.rows import Row, arrow_schema, column
from spare_gen.runner.isolation import Status
from spare_gen.store.shards import rows_to_table  # noqa: F401 (re-exported)

# A polyline is a list of [x, y] points in canvas pixels (x right, y down, origin top-left), float32.
POLYLINES = pa.list_(pa.list_(pa.list_(pa.float32(), 2)))

VIEWS_FILE = "views.parquet"  # folders of parts (spare_gen.store.shards)
DRAWINGS_FILE = "drawings.parquet"


@dataclass(frozen=True, kw_only=True)
class ViewRow(Row):
    """One row of views.parquet: one view of one model, its lines and files."""

    model_id: str | None = column(pa.string())
    view: str | None = column(pa.string())  # f r t 1..8, or rand_000.. for random views
    status: Status | None = column(pa.string())  # ok | failed | timeout | crashed | skipped (the model's)
    error: str | None = column(pa.string())
    hlr_method: str | None = column(pa.string())  # exact | poly: the algorithm that drew this view
    svg: str | None = column(pa.string())  # drawings/<model_id>/<view>.svg, relative to the dataset root
    png: str | None = column(pa.string())  # drawings/<model_id>/<view>.png (null when render.png is off)
    visible: list | None = column(POLYLINES)
    hidden: list | None = column(POLYLINES)
    n_visible: int | None = column(pa.int32())  # number of visible polylines (HLR edges)
    n_hidden: int | None = column(pa.int32())
    bbox2d: list | None = column(pa.list_(pa.float64(), 4))  # [xmin, ymin, xmax, ymax] of all lines, px (null if blank)
    extent: float | None = column(pa.float64())  # max(width, height) of bbox2d, px
    # the image-plane point (model units) drawn at the canvas centre
    center2d: list | None = column(pa.list_(pa.float64(), 2))
    ink_fraction: float | None = column(pa.float64())  # share of non-white PNG pixels
    png_sha256: str | None = column(pa.string())
    svg_sha256: str | None = column(pa.string())
    # world-to-camera rows (right, up, back)
    camera_rotation: list | None = column(pa.list_(pa.list_(pa.float64(), 3), 3))
    camera_position: list | None = column(pa.list_(pa.float64(), 3))  # bbox centre + bbox diagonal x view direction


VIEWS_SCHEMA = arrow_schema(ViewRow)

# render.store = "parquet": the same plus png_image (Hugging Face Image struct {bytes, path}) and svg_text
PACKED_VIEWS_SCHEMA = packed_schema(VIEWS_SCHEMA)


def views_schema(packed: bool) -> pa.Schema:
    return PACKED_VIEWS_SCHEMA if packed else VIEWS_SCHEMA


@dataclass(frozen=True, kw_only=True)
class DrawingRow(Row):
    """One row of drawings.parquet: a model's drawing status, framing and quality flags."""

    model_id: str | None = column(pa.string())
    status: Status | None = column(pa.string())  # ok | failed | timeout | crashed | skipped
    error: str | None = column(pa.string())
    hlr_method: str | None = column(pa.string())  # exact | poly | mixed (some views fell back to poly)
    fallback_reason: str | None = column(pa.string())  # why exact HLR was not used for (some) views
    scale: float | None = column(pa.float64())  # canvas pixels per model unit, the same in every view
    center: list | None = column(pa.list_(pa.float64(), 3))  # bounding-box centre, drawn at the canvas centre
    # tight box from the F/R/T drawings (xmin ymin zmin xmax ymax zmax)
    bbox: list | None = column(pa.list_(pa.float64(), 6))
    blank: bool | None = column(pa.bool_())  # some fixed view has no line
    blank_views: list | None = column(pa.list_(pa.string()))
    tiny: bool | None = column(pa.bool_())  # F, R or T drawing extent below render.tiny_fraction of the canvas
    tiny_views: list | None = column(pa.list_(pa.string()))
    duplicate: bool | None = column(pa.bool_())  # front view identical to an earlier model's (model_id order)
    duplicate_of: str | None = column(pa.string())
    front_png_sha256: str | None = column(pa.string())
    usable: bool | None = column(pa.bool_())  # ok and not blank, tiny or duplicate
    # edges of the model that bound no face (datum axes, construction lines): not drawn unless render.loose_edges
    n_loose_edges: int | None = column(pa.int32())


DRAWINGS_SCHEMA = arrow_schema(DrawingRow)


def failed_rows(model_id: str, status: Status, error: str, views: list[str],
                fallback_reason: str = "") -> tuple[DrawingRow, list[dict]]:
    """The rows of a model that was not drawn: its drawings row and one views row per expected view."""
    model = DrawingRow(model_id=model_id, status=status, error=error, fallback_reason=fallback_reason,
                       duplicate=False, usable=False)
    return model, [failed_view(model_id, v, status, error) for v in views]


def failed_view(model_id: str, view: str, status: Status, error: str) -> dict:
    """The views row of a view that was not drawn, with the reason."""
    return ViewRow(model_id=model_id, view=view, status=status, error=error).as_dict()


TIMING_COLUMNS: tuple[str, ...] = ()  # timings live in <out>/timings/drawings.json

__all__ = ["DRAWINGS_SCHEMA", "PACKED_VIEWS_SCHEMA", "POLYLINES", "TIMING_COLUMNS", "VIEWS_SCHEMA", "DrawingRow",
           "ViewRow", "failed_rows", "failed_view", "rows_to_table", "views_schema"]
