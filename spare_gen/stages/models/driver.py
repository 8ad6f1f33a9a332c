"""Model stage driver: make the units (CSG or house indices, or CAD files), run them on Dask, write models.parquet."""

from __future__ import annotations

from pathlib import Path

from spare_gen.store import shards
from spare_gen.config.schema import Config, ModelSource
from spare_gen.stages.models.csg import primitive_counts_for
from spare_gen.stages.models.files import discover
from spare_gen.stages.models.houses import house_plan
from spare_gen.stages.models.quality import Quality
from spare_gen.stages.models.schema import MODELS_FILE, MODELS_SCHEMA, ModelRow
from spare_gen.stages.models.settings import ModelSettings, ModelUnit
from spare_gen.stages.models.worker import model_rows, model_task
from spare_gen.runner.contract import RunOptions, Summary
from spare_gen.runner.isolation import Status
from spare_gen.runner.sharded import TableOut, all_done, run_sharded_stage
from spare_gen.runner.stage import status_summary
from spare_gen.rows import rows_from_table
from spare_gen.stage_table import MODELS


def model_units(config: Config) -> list[ModelUnit]:
    if config.models.source is ModelSource.CSG:
        csg = config.models.csg
        return [
            {"unit_id": f"csg_{i:06d}", "model_id": f"csg_{i:06d}", "source": "csg", "index": i, "n_primitives": n}
            for i, n in enumerate(primitive_counts_for(csg.count, csg.primitive_counts))
        ]
    if config.models.source is ModelSource.HOUSES:
        houses = config.models.houses
        return [
            {"unit_id": f"house_{i:06d}", "model_id": f"house_{i:06d}", "source": ModelSource.HOUSES.value, "index": i,
             "footprint": footprint.value, "roof": roof.value}
            for i, (footprint, roof) in enumerate(house_plan(houses.count, houses.footprints, houses.roofs))
        ]
    files = config.models.files
    units: list[ModelUnit] = []
    for it in discover(files.root, files.suffixes, files.max_mb, files.limit, files.list_file):
        unit: ModelUnit = {"unit_id": it.model_id, "model_id": it.model_id, "source": "file",
                           "source_path": str(it.path.absolute()), "sha256": it.sha256, "skip_reason": it.skip_reason}
        if it.error:  # a link loop, a FIFO, an unreadable folder...: a failed row, no child started
            unit["error"] = it.error
        units.append(unit)
    return units


MODELS_TABLE = TableOut(MODELS_FILE, MODELS_SCHEMA, model_rows)


def run_models(client, config: Config, out: Path, need_ok: int = 0) -> Summary:
    """Run the stage (``models.parquet`` parts written by the workers); return its summary.

    ``need_ok`` > 0 (a pool alone needs only its ``pool.models``): only the first units in id order, in batches of
    whole parts doubling in size, until that many models are ok or every unit ran. The units are the full list's,
    so a later run of all of them reuses these."""
    units = sorted(model_units(config), key=lambda u: u["unit_id"])
    settings, options = ModelSettings.from_config(config, out), RunOptions.from_config(config)
    part = options.shard_units
    take = len(units) if not need_ok else min(len(units), -(-2 * need_ok // part) * part)
    while True:
        run_sharded_stage(client, model_task, units[:take], settings, (MODELS_TABLE,), options)
        if take >= len(units) or _ok_models(out) >= need_ok:
            return Summary(MODELS.name, summary(out / MODELS_FILE))
        take = min(len(units), 2 * take)


def _ok_models(out: Path) -> int:
    return sum(s == Status.OK for s in shards.read(out / MODELS_FILE, ["status"]).column("status").to_pylist())


def models_unchanged(config: Config, out: Path, need_ok: int = 0) -> bool:
    """True if the model stage would reuse every unit in ``out``: same settings, and for a files source the
    same files with the same content (hashed again here). ``need_ok``: as for ``run_models`` (the units it ran
    are the first ones, as many as models.parquet holds)."""
    units = sorted(model_units(config), key=lambda u: u["unit_id"])
    if need_ok:
        if not (out / MODELS_FILE).exists():
            return False
        units = units[:shards.read(out / MODELS_FILE, ["status"]).num_rows]
    return all_done(units, ModelSettings.from_config(config, out), (MODELS_TABLE,))


def summary(table_path: Path) -> str:
    import json
    from collections import Counter

    rows = rows_from_table(ModelRow, shards.read(table_path, ["status", "rejections", "attempts", "quality"]))
    text = status_summary(MODELS.name, [r.status for r in rows])
    rejected = Counter[str]()
    for r in rows:
        if r.rejections:
            rejected.update(json.loads(r.rejections))
    if rejected:
        attempts = sum(r.attempts or 0 for r in rows)
        text += f"; CSG attempts {attempts}, rejected {sum(rejected.values())} ({dict(sorted(rejected.items()))})"
    flagged = Counter(r.quality for r in rows if r.quality not in (None, Quality.OK))
    if flagged:  # kept, but no questions unless questions.allow_flagged_cad
        text += f"; quality gate flagged {sum(flagged.values())} ({dict(sorted(flagged.items()))}), kept, no questions"
    return text
