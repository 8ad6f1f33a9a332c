"""The pipeline's stages, listed once, in the order they run: each a name, whether the config enables it, and
``run(client, config, out, names) -> Summary`` (``names``: the stages this run was asked for).

``spare-gen run --stages`` takes the names of ``STAGE_NAMES``; a step that ``follows`` a stage (the bias audit
follows the questions) runs whenever that stage runs. Adding a stage is one entry here and one driver.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from spare_gen.audit.probes import REPORT_NAME, audit_and_record
from spare_gen.audit.text import summary as audit_summary
from spare_gen.audit.text import too_little_data, view_aware_too_little
from spare_gen.audit.text import warnings as audit_warnings
from spare_gen.config.schema import Config
from spare_gen.data.evaluate import REPORTS_DIR
from spare_gen.stages.drawings.driver import run_drawings
from spare_gen.stages.models.driver import run_models
from spare_gen.stages.pool.driver import run_pool
from spare_gen.stages.questions.driver import run_questions
from spare_gen.runner.contract import Summary

AUDIT = "audit"


@dataclass(frozen=True)
class Stage:
    name: str
    enabled: Callable[[Config], bool]
    run: Callable[[object, Config, Path, tuple[str, ...]], Summary]
    follows: str = ""  # a step run with that stage, not named on its own in --stages


def _always(config: Config) -> bool:
    return True


def _drawn(config: Config) -> bool:
    return config.render.enabled


def _asked(config: Config) -> bool:
    return config.render.enabled and config.questions.enabled


def _pooled(config: Config) -> bool:
    return config.pool.enabled


def pool_models_only(config: Config, names: tuple[str, ...]) -> int:
    """The models a run needs when it makes a pool and nothing that needs every model (no drawings): pool.models
    (0 = every model, as when drawings are made)."""
    runs = {s.name for s in wanted(config, names)}
    return config.pool.models if "pool" in runs and "drawings" not in runs else 0


def audit_line(out: Path, seed: int, client=None, show: bool = False) -> str:
    """The bias audit of the questions just made, so every dataset card carries it; its fits on the run's Dask
    workers (``show``: progress per probe). An audit that cannot run leaves no earlier report behind for the card
    to show."""
    try:
        report, _ = audit_and_record(out, seed, client, show)
    except (ValueError, FileNotFoundError) as exc:
        (out / REPORTS_DIR / REPORT_NAME).unlink(missing_ok=True)
        return f"audit: NOT RUN ({exc})"
    if (report["flagged"] or report["not_audited"] or report["empty_splits"] or too_little_data(report)
            or view_aware_too_little(report["view_aware"])):  # loud
        return "audit: WARNING: " + audit_summary(report) + "".join(f"\n  WARNING: {w}" for w in audit_warnings(report))
    return f"audit: {audit_summary(report)}"


def _models(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return run_models(client, config, out, pool_models_only(config, names))


def _drawings(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return run_drawings(client, config, out)


def _questions(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return run_questions(client, config, out)


def _audit(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return Summary(AUDIT, audit_line(Path(out), config.seed, client, config.runner.progress))


def _pool(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return run_pool(client, config, out)


STAGES = (
    Stage("models", _always, _models),
    Stage("drawings", _drawn, _drawings),
    Stage("questions", _asked, _questions),
    Stage(AUDIT, _asked, _audit, follows="questions"),
    Stage("pool", _pooled, _pool),
)
STAGE_NAMES = tuple(s.name for s in STAGES if not s.follows)  # what --stages accepts
POOL_STAGES = ("models", "pool")  # `spare-gen pool`


def wanted(config: Config, names: tuple[str, ...]) -> tuple[Stage, ...]:
    """The stages (and the steps that follow them) among ``names`` that ``config`` enables, in run order."""
    return tuple(s for s in STAGES if (s.follows or s.name) in names and s.enabled(config))
