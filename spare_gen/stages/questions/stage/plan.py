"""Plan the question stage before any work: requested and planned counts, per-(task, split, stratum) quotas."""

from __future__ import annotations

from spare_gen.config.schema import Config, ModelReuse
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.select import (
    ModelQueues, NotEnoughModels, QueueKey, fit_counts, plan_quotas, shortage, split_blocks,
)
from spare_gen.stages.questions.stage.inputs import Inputs
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
        return split_blocks(inputs.by_stratum(), config.questions.split, SPLITS, config.seed)
    return inputs.by_stratum()


def model_queues(config: Config, inputs: Inputs) -> ModelQueues:
    """A fresh set of the queues the quotas draw from (one for all tasks, or one per task with model reuse)."""
    return ModelQueues(queued_models(config, inputs), config.seed, by_split=reuses_models(config))


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
