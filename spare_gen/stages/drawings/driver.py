"""Drawing stage driver: one shard of usable models per Dask task; views.parquet and drawings.parquet parts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from spare_gen.store import shards
from spare_gen.atomic import write_parquet
from spare_gen.canvas.views import FIXED_VIEWS
from spare_gen.config.schema import Config, DrawingStore
from spare_gen.stages.drawings.flags import apply_duplicates, duplicate_map
from spare_gen.stages.drawings.schema import (
    DRAWINGS_FILE, DRAWINGS_SCHEMA, VIEWS_FILE, VIEWS_SCHEMA, DrawingRow, views_schema,
)
from spare_gen.stages.drawings.settings import DrawSettings, DrawUnit
from spare_gen.stages.drawings.worker import draw_task, drawings_rows, views_rows
from spare_gen.stages.models.schema import MODELS_FILE, ModelRow
from spare_gen.runner.contract import RunOptions, Summary
from spare_gen.runner.isolation import Status
from spare_gen.runner.sharded import TableOut, done_units, run_sharded_stage
from spare_gen.runner.stage import status_summary
from spare_gen.rows import rows_from_table
from spare_gen.store.shards import rows_to_table
from spare_gen.stage_table import DRAWINGS

TABLES = (TableOut(VIEWS_FILE, VIEWS_SCHEMA, views_rows), TableOut(DRAWINGS_FILE, DRAWINGS_SCHEMA, drawings_rows))


def tables(config: Config) -> tuple[TableOut, TableOut]:
    """The stage's tables; views has the packed columns when ``render.store = "parquet"``."""
    packed = config.render.store is DrawingStore.PARQUET
    return (TableOut(VIEWS_FILE, views_schema(packed), views_rows), TABLES[1])


def drawable_models(out: Path) -> list[ModelRow]:
    """Models the model stage built (status ok), in model_id order."""
    table = shards.read(out / MODELS_FILE, ["model_id", "status", "brep_path"])
    return [r for r in rows_from_table(ModelRow, table) if r.status == Status.OK]


def run_drawings(client, config: Config, out: Path, views: tuple[str, ...] = FIXED_VIEWS) -> Summary:
    """Run the stage (drawing the fixed ``views``, the ones the asked tasks read), then mark duplicates across
    models; return its summary."""
    out_abs = out.resolve()
    units: list[DrawUnit] = [
        {"unit_id": str(m.model_id), "model_id": str(m.model_id), "shape_path": str(out_abs / str(m.brep_path))}
        for m in drawable_models(out)
    ]
    settings = DrawSettings.from_config(config, out, views)
    if settings.views is not None:  # drawings of every view already there are kept, if that reuses more models
        every = DrawSettings.from_config(config, out)
        if done_units(units, every, tables(config)) > done_units(units, settings, tables(config)):
            settings = every
    run_sharded_stage(client, draw_task, units, settings, tables(config), RunOptions.from_config(config))
    mark_duplicates(out / DRAWINGS_FILE)
    skipped = [v for v in FIXED_VIEWS if v not in settings.fixed_views()]
    note = f"; views {', '.join(skipped)} not drawn (no task asked for reads them)" if skipped else ""
    return Summary(DRAWINGS.name, summary(out / DRAWINGS_FILE, out / VIEWS_FILE) + note)


def mark_duplicates(drawings: Path) -> None:
    """Set ``duplicate``, ``duplicate_of`` and ``usable`` in every part (rewriting only parts that change).

    Duplicates need every model (a front view identical to an earlier model's), so this is a pass over
    the parts after the stage: two columns of the whole table, then one part at a time.
    """
    keys = rows_from_table(DrawingRow, shards.read(drawings, ["model_id", "status", "front_png_sha256"]))
    duplicate_of = duplicate_map(keys)
    for path, part in shards.iter_parts(drawings):
        rows = apply_duplicates(rows_from_table(DrawingRow, part), duplicate_of)
        new = rows_to_table([r.as_dict() for r in rows], DRAWINGS_SCHEMA)
        if not new.equals(part):
            write_parquet(path, new)


def summary(drawings: Path, views: Path) -> str:
    rows = rows_from_table(DrawingRow, shards.read(drawings, ["status", "blank", "tiny", "duplicate", "usable"]))
    text = status_summary(DRAWINGS.name, [r.status for r in rows])
    flags = {"blank": sum(bool(r.blank) for r in rows), "tiny": sum(bool(r.tiny) for r in rows),
             "duplicate": sum(bool(r.duplicate) for r in rows)}
    usable = sum(bool(r.usable) for r in rows)
    methods = Counter(shards.read(views, ["hlr_method"]).column("hlr_method").to_pylist())
    n_views = sum(methods.values())
    return f"{text}; views {n_views} by method {dict(methods)}; flagged {flags}; usable models {usable}"
