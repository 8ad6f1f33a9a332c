"""The row of models.parquet, declared once; the table's schema is generated from it."""

from dataclasses import dataclass

import pyarrow as pa

from spare_gen.rows import Row, arrow_schema, column
from spare_gen.runner.isolation import Status

MODELS_FILE = "models.parquet"  # a folder of parts (spare_gen.store.shards)


@dataclass(frozen=True, kw_only=True)
class ModelRow(Row):
    """One row of models.parquet: a model's source, status, CAD files and B-rep properties."""

    model_id: str | None = column(pa.string())
    source: str | None = column(pa.string())  # csg | file | houses
    source_path: str | None = column(pa.string())
    sha256: str | None = column(pa.string())  # of the source file, or of the written STEP for CSG models
    status: Status | None = column(pa.string())  # ok | failed | timeout | crashed | skipped
    error: str | None = column(pa.string())
    n_primitives: int | None = column(pa.int32())
    csg: str | None = column(pa.string())  # JSON program: rebuild with spare_gen.cad.build_csg(json.loads(csg))
    house: str | None = column(pa.string())  # JSON house description (spare_gen.stages.models.houses): rebuild with
    # spare_gen.cad.build_house(spare_gen.stages.models.houses.convex_parts(json.loads(house)))
    attempts: int | None = column(pa.int32())
    rejections: str | None = column(pa.string())  # JSON {rule: count} of rejected CSG attempts
    step_path: str | None = column(pa.string())
    step_sha256: str | None = column(pa.string())
    brep_path: str | None = column(pa.string())  # exact copy read by later stages
    brep_sha256: str | None = column(pa.string())
    bbox_min: list | None = column(pa.list_(pa.float64(), 3))
    bbox_max: list | None = column(pa.list_(pa.float64(), 3))
    volume: float | None = column(pa.float64())
    area: float | None = column(pa.float64())
    n_solids: int | None = column(pa.int32())
    n_shells: int | None = column(pa.int32())
    n_faces: int | None = column(pa.int32())
    n_edges: int | None = column(pa.int32())
    n_vertices: int | None = column(pa.int32())
    valid: bool | None = column(pa.bool_())
    quality: str | None = column(pa.string())  # ok | invalid_brep | disjoint_solids (spare_gen.stages.models.quality)
    quality_reason: str | None = column(pa.string())  # one line; empty when ok


MODELS_SCHEMA = arrow_schema(ModelRow)

# Timings are not data: they live in <out>/timings/<stage>.json (spare_gen.runner.stage), so equal
# configs give equal Parquet bytes.
TIMING_COLUMNS: tuple[str, ...] = ()


