"""The row of models.parquet, declared once; the table's schema is generated from it."""

import pyarrow as pa

from spare_gen.rows import arrow_schema, column, row_type
from spare_gen.runner.isolation import Status

MODELS_FILE = "models.parquet"  # a folder of parts (spare_gen.store.shards)

ModelRow = row_type("ModelRow", [
    ("model_id", str, column(pa.string())),
    ("source", str, column(pa.string())),  # csg | file | houses
    ("source_path", str, column(pa.string())),
    ("sha256", str, column(pa.string())),  # of the source file, or of the written STEP for CSG models
    ("status", Status, column(pa.string())),  # ok | failed | timeout | crashed | skipped
    ("error", str, column(pa.string())),
    ("n_primitives", int, column(pa.int32())),
    ("csg", str, column(pa.string())),  # JSON program: rebuild with spare_gen.cad.build_csg(json.loads(csg))
    ("house", str, column(pa.string())),  # JSON house description (spare_gen.stages.models.houses): rebuild with
    # spare_gen.cad.build_house(spare_gen.stages.models.houses.convex_parts(json.loads(house)))
    ("attempts", int, column(pa.int32())),
    ("rejections", str, column(pa.string())),  # JSON {rule: count} of rejected CSG attempts
    ("step_path", str, column(pa.string())),
    ("step_sha256", str, column(pa.string())),
    ("brep_path", str, column(pa.string())),  # exact copy read by later stages
    ("brep_sha256", str, column(pa.string())),
    ("bbox_min", list, column(pa.list_(pa.float64(), 3))),
    ("bbox_max", list, column(pa.list_(pa.float64(), 3))),
    ("volume", float, column(pa.float64())),
    ("area", float, column(pa.float64())),
    ("n_solids", int, column(pa.int32())),
    ("n_shells", int, column(pa.int32())),
    ("n_faces", int, column(pa.int32())),
    ("n_edges", int, column(pa.int32())),
    ("n_vertices", int, column(pa.int32())),
    ("valid", bool, column(pa.bool_())),
    ("quality", str, column(pa.string())),  # ok | invalid_brep | disjoint_solids (spare_gen.stages.models.quality)
    ("quality_reason", str, column(pa.string())),  # one line; empty when ok
], "One row of models.parquet: a model's source, status, CAD files and B-rep properties.")
MODELS_SCHEMA = arrow_schema(ModelRow)

# Timings are not data: they live in <out>/timings/<stage>.json (spare_gen.runner.stage), so equal
# configs give equal Parquet bytes.
TIMING_COLUMNS: tuple[str, ...] = ()


