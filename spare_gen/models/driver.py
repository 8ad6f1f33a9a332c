"""Model stage driver: make the units (CSG indices or CAD files), run them on Dask, write models.parquet."""

from __future__ import annotations

from pathlib import Path

from spare_gen import shards
from spare_gen.config.schema import Config, ModelSource
from spare_gen.models.csg import primitive_counts_for
from spare_gen.models.files import discover
from spare_gen.models.schema import MODELS_FILE, MODELS_SCHEMA
from spare_gen.models.settings import ModelSettings
from spare_gen.models.worker import model_rows, model_task
from spare_gen.runner.sharded import TableOut, run_sharded_stage
from spare_gen.runner.stage import status_summary


def model_units(config: Config) -> list[dict]:
    if config.models.source is ModelSource.CSG:
        csg = config.models.csg
        return [
            {"unit_id": f"csg_{i:06d}", "model_id": f"csg_{i:06d}", "source": "csg", "index": i, "n_primitives": n}
            for i, n in enumerate(primitive_counts_for(csg.count, csg.primitive_counts))
        ]
    files = config.models.files
    return [
        {"unit_id": it.model_id, "model_id": it.model_id, "source": "file", "source_path": str(it.path.resolve()),
         "sha256": it.sha256, "skip_reason": it.skip_reason}
        for it in discover(files.root, files.suffixes, files.max_mb, files.limit, files.list_file)
    ]


MODELS_TABLE = TableOut(MODELS_FILE, MODELS_SCHEMA, model_rows)


def run_models(client, config: Config, out: Path) -> Path:
    """Run the stage; return the folder of ``models.parquet`` (parts written by the workers)."""
    run_sharded_stage(client, model_task, model_units(config), ModelSettings.from_config(config, out),
                      (MODELS_TABLE,), shard_units=config.runner.shard_units,
                      debug=config.debug.model_dump(mode="json"), progress=config.runner.progress)
    return out / MODELS_FILE


def summary(table_path: Path) -> str:
    import json
    from collections import Counter

    rows = shards.read(table_path, ["status", "rejections", "attempts", "quality"]).to_pylist()
    text = status_summary("models", rows)
    rejected = Counter()
    for r in rows:
        if r["rejections"]:
            rejected.update(json.loads(r["rejections"]))
    if rejected:
        attempts = sum(r["attempts"] or 0 for r in rows)
        text += f"; CSG attempts {attempts}, rejected {sum(rejected.values())} ({dict(sorted(rejected.items()))})"
    flagged = Counter(r.get("quality") for r in rows if r.get("quality") not in (None, "ok"))
    if flagged:  # kept, but no questions unless questions.allow_flagged_cad
        text += f"; quality gate flagged {sum(flagged.values())} ({dict(sorted(flagged.items()))}), kept, no questions"
    return text
