"""Schema of models.parquet, declared once."""

import pyarrow as pa

MODELS_FILE = "models.parquet"  # a folder of parts (spare_gen.shards)

MODELS_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("source", pa.string()),  # csg | file | houses
        ("source_path", pa.string()),
        ("sha256", pa.string()),  # of the source file, or of the written STEP for CSG models
        ("status", pa.string()),  # ok | failed | timeout | crashed | skipped
        ("error", pa.string()),
        ("n_primitives", pa.int32()),
        ("csg", pa.string()),  # JSON program: rebuild with spare_gen.cad.build_csg(json.loads(csg))
        ("house", pa.string()),  # JSON house description (spare_gen.models.houses): rebuild with
        # spare_gen.cad.build_house(spare_gen.models.houses.convex_parts(json.loads(house)))
        ("attempts", pa.int32()),
        ("rejections", pa.string()),  # JSON {rule: count} of rejected CSG attempts
        ("step_path", pa.string()),
        ("step_sha256", pa.string()),
        ("brep_path", pa.string()),  # exact copy read by later stages
        ("brep_sha256", pa.string()),
        ("bbox_min", pa.list_(pa.float64(), 3)),
        ("bbox_max", pa.list_(pa.float64(), 3)),
        ("volume", pa.float64()),
        ("area", pa.float64()),
        ("n_solids", pa.int32()),
        ("n_shells", pa.int32()),
        ("n_faces", pa.int32()),
        ("n_edges", pa.int32()),
        ("n_vertices", pa.int32()),
        ("valid", pa.bool_()),
        ("quality", pa.string()),  # ok | invalid_brep | disjoint_solids (spare_gen.models.quality)
        ("quality_reason", pa.string()),  # one line; empty when ok
    ]
)

# Timings are not data: they live in <out>/timings/<stage>.json (spare_gen.runner.stage), so equal
# configs give equal Parquet bytes.
TIMING_COLUMNS: tuple[str, ...] = ()


