"""Each stage's implementation as the stage table (``spare_gen.stage_table``) names it: ``run_<stage>(client, config,
out, names) -> Summary`` (``names``: the stages this run was asked for), and the bias audit's line.

The table (names, folders, help, the config switches, run order) is re-exported here for the jobs.
"""

from __future__ import annotations

from pathlib import Path

from spare_gen.audit.probes import REPORT_NAME, audit_and_record
from spare_gen.audit.text import summary as audit_summary
from spare_gen.audit.text import too_little_data, view_aware_too_little
from spare_gen.audit.text import warnings as audit_warnings
from spare_gen.config.schema import Config
from spare_gen.data.evaluate import REPORTS_DIR
from spare_gen.stages.drawings import driver as drawings_driver
from spare_gen.stages.models import driver as models_driver
from spare_gen.stages.pool import driver as pool_driver
from spare_gen.stages.questions import driver as questions_driver
from spare_gen.stages.questions.tasks import drawn_views
from spare_gen.runner.contract import Summary
from spare_gen.store import ownership
from spare_gen.stage_table import AUDIT, POOL_STAGES, STAGE_NAMES, STAGES, pool_models_only, wanted

__all__ = ["POOL_STAGES", "STAGE_NAMES", "STAGES", "audit_line", "pool_models_only", "run_audit", "run_drawings",
           "run_models", "run_pool", "run_questions", "wanted"]


def audit_line(out: Path, seed: int, client=None, show: bool = False) -> str:
    """The bias audit of the questions just made, so every dataset card carries it; its fits on the run's Dask
    workers (``show``: progress per probe). An audit that cannot run leaves no earlier report behind for the card
    to show."""
    try:
        report, _ = audit_and_record(out, seed, client, show)
    except (ValueError, FileNotFoundError) as exc:
        ownership.remove(out, [f"{REPORTS_DIR}/{REPORT_NAME}"])  # spare_gen's own report only, as it wrote it
        return f"audit: NOT RUN ({exc})"
    if (report.flagged or report.not_audited or report.empty_splits or too_little_data(report)
            or view_aware_too_little(report.view_aware)):  # loud
        return "audit: WARNING: " + audit_summary(report) + "".join(f"\n  WARNING: {w}" for w in audit_warnings(report))
    return f"audit: {audit_summary(report)}"


def run_models(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return models_driver.run_models(client, config, out, pool_models_only(config, names))


def run_drawings(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return drawings_driver.run_drawings(client, config, out, drawn_views(config))


def run_questions(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return questions_driver.run_questions(client, config, out)


def run_audit(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return Summary(AUDIT.name, audit_line(Path(out), config.seed, client, config.runner.progress))


def run_pool(client, config: Config, out: Path, names: tuple[str, ...]) -> Summary:
    return pool_driver.run_pool(client, config, out)
