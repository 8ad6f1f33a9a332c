"""Plan the question stage before any work: requested and planned counts, per-(task, split, stratum) quotas."""

from __future__ import annotations

from spare_gen.config import ConfigError
from spare_gen.config.schema import Config, ModelReuse, ModelSource
from spare_gen.stages.models.files import list_paths
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.select import (
    ModelQueues, NotEnoughModels, QueueKey, fit_counts, plan_quotas, shortage, split_blocks,
)
from spare_gen.stages.questions.assembly.inputs import Inputs
from spare_gen.stages.questions.tasks import TASKS

ADVICE = "raise models.csg.count or models.houses.count (or add CAD files), or set questions.allow_fewer = true"


def _strata_sorted(strata) -> list:
    return sorted(set(strata), key=lambda s: -1 if s is None else s)


def reuses_models(config: Config) -> bool:
    """``questions.model_reuse = "per_task"``: each task draws from every usable model (``split_blocks``)."""
    return config.questions.model_reuse is ModelReuse.PER_TASK


def queued_models(config: Config, inputs: Inputs) -> dict[QueueKey, list[str]]:
    """The usable models by queue: per stratum, or per (split, stratum) block when tasks reuse models."""
    if reuses_models(config):
        queues: dict[QueueKey, list[str]] = dict(
            split_blocks(inputs.by_stratum(), config.questions.split, SPLITS, config.seed).items())
    else:
        queues = dict(inputs.by_stratum().items())
    return queues


def model_queues(config: Config, inputs: Inputs) -> ModelQueues:
    """A fresh set of the queues the quotas draw from (one for all tasks, or one per task with model reuse)."""
    return ModelQueues(queued_models(config, inputs), config.seed, by_split=reuses_models(config))


def most_models(config: Config) -> tuple[int, str]:
    """(the most models the inputs can give, what says so): the CSG or house count, or the CAD files the folder or
    list holds (a listing, no file read; up to ``models.files.limit``). Models the stages reject only lower it."""
    models = config.models
    if models.source is ModelSource.CSG:
        return models.csg.count, f"models.csg.count = {models.csg.count}"
    if models.source is ModelSource.HOUSES:
        return models.houses.count, f"models.houses.count = {models.houses.count}"
    files = models.files
    found = len(list_paths(files.root, files.suffixes, files.list_file)[1])
    where = (f"models.files.list_file {files.list_file!r} lists {found} CAD file(s)" if files.list_file
             else f"models.files.root {files.root!r} holds {found} CAD file(s)")
    if files.limit and files.limit < found:
        return files.limit, f"{where}, models.files.limit = {files.limit}"
    return found, where


def check_counts(config: Config, found: tuple[int, str] | None = None) -> None:
    """Raise ConfigError, one line naming the key and the most the inputs can give, for counts no run could meet:
    with ``model_reuse = "once"`` N models give N questions in all tasks together, with ``"per_task"`` N per task.
    Checked before any work (``spare_gen.jobs.preflight``); ``allow_fewer`` covers the shortfalls of counts
    within this bound (models that fail, filters, strata). ``found``: ``most_models(config)`` if already found."""
    counts = {t.value: int(config.questions.counts.get(t, 0)) for t in TASKS}
    if not any(counts.values()):
        return
    most, source = most_models(config) if found is None else found
    task, largest = max(counts.items(), key=lambda item: item[1])
    if reuses_models(config):
        if largest > most:
            raise ConfigError(
                f"config error: questions.counts.{task} = {largest} cannot be met: the inputs give at most {most} "
                f"questions per task ({source}; one question per model and task, questions.model_reuse = "
                f"'per_task'); lower the count or give more models")
        return
    total = sum(counts.values())
    if total > most:
        key = f"questions.counts.{task} = {largest}" if largest > most else \
            f"questions.counts = {{{', '.join(f'{t} = {n}' for t, n in counts.items() if n)}}} ({total} in all)"
        raise ConfigError(
            f"config error: {key} cannot be met: the inputs give at most {most} questions in all tasks together "
            f"({source}; each model serves one question, questions.model_reuse = 'once'); lower the counts, give "
            "more models or set questions.model_reuse = 'per_task'")


def plan(config: Config, inputs: Inputs) -> tuple[dict, dict, dict]:
    """(requested counts, planned counts, quotas); raise NotEnoughModels before any work (rule 7)."""
    q = config.questions
    requested = {t.value: int(q.counts.get(t, 0)) for t in TASKS}
    strata = _strata_sorted(inputs.strata.values())
    if not strata:
        raise NotEnoughModels(f"questions: no usable models (filtered by rule: {dict(inputs.filtered)}); {ADVICE}")
    available = {k: len(ids) for k, ids in queued_models(config, inputs).items()}
    quotas = plan_quotas(requested, q.split, SPLITS, strata)
    missing = shortage(quotas, available, reuses_models(config))
    planned = requested
    if missing:
        if not q.allow_fewer:
            raise NotEnoughModels(f"questions: {missing}; {ADVICE}")
        planned = fit_counts(requested, q.split, SPLITS, available, reuses_models(config))
        quotas = plan_quotas(planned, q.split, SPLITS, strata)
    return requested, planned, quotas
