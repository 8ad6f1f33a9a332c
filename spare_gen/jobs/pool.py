"""The pool job: ground-truth wireframes, corrupted variants with pictures, annotation pairs, a contact sheet.

``run_pool`` assumes the models stage already ran (``models.parquet`` exists). ``spare-gen pool`` is
``spare_gen.jobs.regenerate.run`` with the models and pool stages.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from spare_gen.atomic import write_bytes
from spare_gen.config.schema import Config
from spare_gen.runner.isolation import Status
from spare_gen.wireframes.corruptions import SEVERITIES, get_corruption_names
from spare_gen.wireframes.driver import run_corruptions, run_pairs, run_wireframes, summary
from spare_gen.wireframes.pictures import contact_sheet

PREVIEW = "preview/corruptions.png"


def write_preview(out: Path, wireframes: pa.Table, corruptions: pa.Table) -> Path | None:
    """Contact sheet (kinds x severities) of the model with the most corners among those whose variants
    all succeeded (ties: the first model_id), so the sheet shows as much structure as the pool has."""
    kinds, severities = get_corruption_names(), list(SEVERITIES)
    rows = [r for r in corruptions.select(["model_id", "kind", "severity", "status", "overlay_png"]).to_pylist()
            if r["kind"] in kinds]  # corrupted variants only, not imported predictions  # fmt: skip
    corners = {r["model_id"]: r["n_corners"] or 0 for r in wireframes.select(["model_id", "n_corners"]).to_pylist()}
    complete = []
    for model_id in sorted({r["model_id"] for r in rows}):
        mine = [r for r in rows if r["model_id"] == model_id]
        if len(mine) == len(kinds) * len(severities) and all(r["status"] == Status.OK.value for r in mine):
            complete.append((-corners.get(model_id, 0), model_id, mine))
    if not complete:
        return None
    _, model_id, mine = min(complete, key=lambda c: c[:2])
    cells = {(r["kind"], r["severity"]): (out / r["overlay_png"]).read_bytes() for r in mine}
    title = f"{model_id}: variants (blue) over the ground truth (black)"
    return write_bytes(out / PREVIEW, contact_sheet(cells, kinds, severities, title))


def run_pool(client, config: Config, out: Path) -> str:
    """Wireframes, corruptions and pairs of the first ``pool.models`` usable models; returns a summary line."""
    out = Path(out)
    wireframes = run_wireframes(client, config, out)
    corruptions = run_corruptions(client, config, out, wireframes)
    pairs = run_pairs(config, out, corruptions)
    write_preview(out, wireframes, corruptions)
    return summary(wireframes, corruptions, pairs)
