"""The main job: regenerate a dataset (models, drawings, question sets, and the corrupted pool if enabled)."""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
from pathlib import Path

from spare_gen.atomic import write_json
from spare_gen.config.schema import Config
from spare_gen.models.driver import run_models
from spare_gen.models.driver import summary as models_summary
from spare_gen.questions.card import CARD_NAME, write_pool_section
from spare_gen.runner.cluster import open_client
from spare_gen.versions import package_versions


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def write_manifest(out: Path, config: Config, started: str, finished: str | None, stages: dict) -> None:
    write_json(
        out / "dataset.json",
        {
            "config": config.model_dump(mode="json"),
            "seed": config.seed,
            "versions": package_versions(),
            "started": started,
            "finished": finished,
            "stages": stages,
        },
    )


def run(config: Config, *, stages: tuple[str, ...] = ("models", "drawings", "questions", "pool")) -> dict:
    """Run the enabled stages in order on the configured Dask cluster; return per-stage summaries."""
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    started, t0 = _now(), time.monotonic()
    summaries: dict[str, str] = {}
    write_manifest(out, config, started, None, summaries)
    say = lambda msg: print(f"spare-gen: {msg}", file=sys.stderr)  # noqa: E731
    with open_client(config.runner.scheduler, config.runner.workers, config.runner.dashboard) as client:
        if "models" in stages:
            table = run_models(client, config, out)
            summaries["models"] = models_summary(table)
            say(summaries["models"])
        if "drawings" in stages and config.render.enabled:
            from spare_gen.drawings.driver import run_drawings, summary

            summaries["drawings"] = summary(run_drawings(client, config, out))
            say(summaries["drawings"])
        if "questions" in stages and config.questions.enabled and config.render.enabled:
            from spare_gen.questions.driver import run_questions

            summaries["questions"] = run_questions(client, config, out)
            say(summaries["questions"])
            summaries["audit"] = _audit(out, config.seed)
            say(summaries["audit"])
        if "pool" in stages and config.pool.enabled:
            from pipelines.pool import run_pool

            summaries["pool"] = run_pool(client, config, out)
            say(summaries["pool"])
            if (out / CARD_NAME).is_file():  # the card (written by the question stage) describes the pool too
                write_pool_section(out)
    write_manifest(out, config, started, _now(), summaries)
    say(f"done in {time.monotonic() - t0:.1f} s; output in {out}")
    return summaries


def _audit(out: Path, seed: int) -> str:
    """The bias audit, so every dataset card carries it (the question stage rewrites the card)."""
    from spare_gen.audit.probes import audit_and_record
    from spare_gen.audit.text import summary, warnings

    try:
        report, _, _ = audit_and_record(out, seed)
    except (ValueError, FileNotFoundError) as exc:
        return f"audit: NOT RUN ({exc})"
    if report["flagged"] or report["not_audited"] or report["empty_splits"]:  # loud: never "within chance"
        return "audit: WARNING: " + summary(report) + "".join(f"\n  WARNING: {w}" for w in warnings(report))
    return f"audit: {summary(report)}"


def stage_summaries(out: Path) -> dict:
    path = out / "dataset.json"
    return json.loads(path.read_text()).get("stages", {}) if path.exists() else {}
