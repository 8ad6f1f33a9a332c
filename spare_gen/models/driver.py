"""Model stage driver: make the units (CSG indices or CAD files), run them on Dask, write models.parquet."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from spare_gen.atomic import write_parquet
from spare_gen.config.schema import Config, ModelSource
from spare_gen.models.csg import primitive_counts_for
from spare_gen.models.files import discover
from spare_gen.models.schema import MODELS_SCHEMA, rows_to_table
from spare_gen.models.task import model_task
from spare_gen.runner.stage import run_stage, status_summary


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


def run_models(client, config: Config, out: Path) -> pa.Table:
    units = model_units(config)
    ctx = {
        "seed": config.seed,
        "out_dir": str(out.resolve()),
        "timeout_s": config.runner.timeout_s,
        "csg": config.models.csg.model_dump(mode="json"),
        "debug": config.debug.model_dump(mode="json"),
    }
    rows = run_stage(client, "models", model_task, units, ctx, out, progress=config.runner.progress)
    for row in rows:
        if row["source"] == "csg" and row["status"] == "ok":
            row["sha256"] = row["step_sha256"]
    table = rows_to_table(rows, MODELS_SCHEMA)
    write_parquet(out / "models.parquet", table)
    return table


def summary(table: pa.Table) -> str:
    import json
    from collections import Counter

    rows = table.to_pylist()
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
