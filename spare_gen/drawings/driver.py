"""Drawing stage driver: one Dask task per usable model, then views.parquet and drawings.parquet."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.atomic import write_parquet
from spare_gen.config.schema import Config
from spare_gen.models.schema import rows_to_table
from spare_gen.runner.stage import run_stage, status_summary


def drawable_models(out: Path) -> list[dict]:
    """Models the model stage built (status ok), in model_id order."""
    table = pq.read_table(out / "models.parquet", columns=["model_id", "status", "brep_path"])
    return [r for r in table.to_pylist() if r["status"] == "ok"]


def run_drawings(client, config: Config, out: Path) -> tuple[pa.Table, pa.Table]:
    from spare_gen.drawings.flags import assign_duplicate_flags
    from spare_gen.drawings.schema import DRAWINGS_SCHEMA, VIEWS_SCHEMA
    from spare_gen.drawings.task import draw_task

    out_abs = out.resolve()
    units = [
        {"unit_id": m["model_id"], "model_id": m["model_id"], "shape_path": str(out_abs / m["brep_path"])}
        for m in drawable_models(out)
    ]
    ctx = {
        "out_dir": str(out_abs),
        "seed": config.seed,
        "render": config.render.model_dump(mode="json"),
        "runner": config.runner.model_dump(mode="json"),
        "debug": config.debug.model_dump(mode="json"),
    }
    results = run_stage(client, "drawings", draw_task, units, ctx, out, progress=config.runner.progress)
    model_rows = assign_duplicate_flags([r["model"] for r in results])
    view_rows = [v for r in results for v in r.get("views", [])]
    drawings = rows_to_table(model_rows, DRAWINGS_SCHEMA)
    views = rows_to_table(view_rows, VIEWS_SCHEMA)
    write_parquet(out / "views.parquet", views)
    write_parquet(out / "drawings.parquet", drawings)
    return drawings, views


def summary(tables: tuple[pa.Table, pa.Table]) -> str:
    drawings, views = tables
    rows = drawings.to_pylist()
    text = status_summary("drawings", rows)
    flags = {k: sum(bool(r.get(k)) for r in rows) for k in ("blank", "tiny", "duplicate")}
    usable = sum(bool(r.get("usable")) for r in rows)
    methods = {}
    for m in views.column("hlr_method").to_pylist():
        methods[m] = methods.get(m, 0) + 1
    return f"{text}; views {views.num_rows} by method {methods}; flagged {flags}; usable models {usable}"
