"""Plan the question stage before any work: requested and planned counts, per-(task, split, stratum) quotas."""

from __future__ import annotations

from spare_gen.config.schema import Config
from spare_gen.questions.layout import SPLITS
from spare_gen.questions.select import NotEnoughModels, fit_counts, plan_quotas, shortage
from spare_gen.questions.stage.inputs import Inputs
from spare_gen.questions.tasks import TASKS

ADVICE = "raise models.csg.count or models.houses.count (or add CAD files), or set questions.allow_fewer = true"


def _strata_sorted(strata) -> list:
    return sorted(set(strata), key=lambda s: -1 if s is None else s)


def plan(config: Config, inputs: Inputs) -> tuple[dict, dict, dict]:
    """(requested counts, planned counts, quotas); raise NotEnoughModels before any work (rule 7)."""
    q = config.questions
    requested = {t.value: int(q.counts.get(t, 0)) for t in TASKS}
    available = {s: len(ids) for s, ids in inputs.by_stratum().items()}
    if not available:
        raise NotEnoughModels(f"questions: no usable models (filtered by rule: {dict(inputs.filtered)}); {ADVICE}")
    strata = _strata_sorted(available)
    quotas = plan_quotas(requested, q.split, SPLITS, strata)
    missing = shortage(quotas, available)
    planned = requested
    if missing:
        if not q.allow_fewer:
            raise NotEnoughModels(f"questions: {missing}; {ADVICE}")
        planned = fit_counts(requested, q.split, SPLITS, available)
        quotas = plan_quotas(planned, q.split, SPLITS, strata)
    return requested, planned, quotas
