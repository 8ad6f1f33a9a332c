"""Run one stage as Dask tasks, one unit (model) each, keeping only completed units (resume-safe).

Each finished unit is written atomically to ``<out>/.units/<stage>/<unit_id>.json`` by the worker
that ran it; a rerun skips units whose file exists, so a killed run resumes where it stopped and a
failed or lost worker costs only its unit. Results are returned in ``unit_id`` order, whatever the
number of workers or the order in which they finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

from spare_gen.atomic import write_json

Task = Callable[[dict, dict], dict]


def unit_dir(out_dir: str | os.PathLike, stage: str) -> Path:
    return Path(out_dir) / ".units" / stage


def _unit_path(out_dir: str | os.PathLike, stage: str, unit_id: str) -> Path:
    return unit_dir(out_dir, stage) / f"{unit_id}.json"


def ctx_fingerprint(ctx: dict) -> str:
    """Hash of the settings a stage depends on: a unit done under other settings is not reused on resume."""
    relevant = {k: v for k, v in ctx.items() if k not in ("out_dir", "runner")}
    if isinstance(ctx.get("runner"), dict):  # only the time limit of the runner changes results
        relevant["timeout_s"] = ctx["runner"].get("timeout_s")
    text = json.dumps(relevant, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def execute_unit(task: Task, unit: dict, ctx: dict, out_dir: str, stage: str) -> dict:
    """Runs on a worker: the task, then its result file (the unit counts as done only once that exists)."""
    start = time.monotonic()
    try:
        result = task(unit, ctx)
    except Exception as exc:  # the task wrapper itself failed: record, never lose the run
        result = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    result.setdefault("unit_id", unit["unit_id"])
    result.setdefault("task_seconds", round(time.monotonic() - start, 4))
    result["ctx_fingerprint"] = ctx_fingerprint(ctx)
    write_json(_unit_path(out_dir, stage, unit["unit_id"]), result)
    return result


def load_done(out_dir: str | os.PathLike, stage: str, unit_ids: list[str], fingerprint: str) -> dict[str, dict]:
    """Finished units of this stage made under the same settings (others run again)."""
    done = {}
    for uid in unit_ids:
        path = _unit_path(out_dir, stage, uid)
        if path.exists():
            try:
                result = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError):
                continue  # unreadable: run again
            if result.get("ctx_fingerprint") == fingerprint:
                done[uid] = result
    return done


def run_stage(
    client,
    stage: str,
    task: Task,
    units: list[dict],
    ctx: dict,
    out_dir: str | os.PathLike,
    *,
    progress: bool = True,
) -> list[dict]:
    """Run ``task(unit, ctx)`` for every unit not already done; return all results sorted by unit_id."""
    from distributed import as_completed
    from tqdm.auto import tqdm

    out_dir = str(Path(out_dir).resolve())
    ids = [u["unit_id"] for u in units]
    if len(set(ids)) != len(ids):
        dup = [k for k, v in Counter(ids).items() if v > 1][:5]
        raise ValueError(f"stage {stage}: duplicate unit ids {dup}")
    results = load_done(out_dir, stage, ids, ctx_fingerprint(ctx))
    todo = [u for u in units if u["unit_id"] not in results]
    if results:
        print(f"spare-gen: {stage}: {len(results)} of {len(units)} units already done, resuming", file=sys.stderr)
    if todo:
        # ctx is small: pass it by value (scatter(broadcast=True) was seen to hang with busy workers)
        futures = [
            client.submit(execute_unit, task, u, ctx, out_dir, stage, key=f"{stage}-{u['unit_id']}", pure=False)
            for u in todo
        ]
        bar = tqdm(total=len(units), initial=len(results), desc=stage, unit="model", disable=not progress,
                   file=sys.stderr, dynamic_ncols=True)
        try:
            for fut in as_completed(futures):
                res = fut.result()
                results[res["unit_id"]] = res
                bar.update(1)
        finally:
            bar.close()
    return [results[uid] for uid in sorted(results)]


def status_summary(stage: str, rows: list[dict]) -> str:
    counts = Counter(r.get("status", "?") for r in rows)
    return f"{stage}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
