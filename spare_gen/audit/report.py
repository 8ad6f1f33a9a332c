"""The bias audit's report (``reports/audit.json``), typed: what the probes found and how they judged it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path


@dataclass(frozen=True)
class AuditReport:
    """One audit of a dataset: its seed and confidence levels, one result per (task, probe) (``results``: the
    probe's evaluations on the test split and in cross-validation, each with its family interval, and its verdict),
    the empty splits, the columns left out as answer keys, the flagged and not audited ``task/probe`` names and the
    view-aware section (``spare_gen.audit.learnability.view_aware``). ``as_json`` is the file's record."""

    seed: int
    family_confidence: float
    per_evaluation_confidence: float
    confidence: float
    min_train: int
    cv_folds: int
    results: list[dict]
    empty_splits: list[str] = field(default_factory=list)
    answer_key_columns: dict[str, list[str]] = field(default_factory=dict)
    flagged: list[str] = field(default_factory=list)
    not_audited: list[str] = field(default_factory=list)
    view_aware: dict = field(default_factory=dict)  # empty in a report made before the view-aware probes

    def as_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, record: dict) -> "AuditReport":
        """The report of a file's record (keys a later version added are left out)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in names})

    @classmethod
    def read(cls, path: Path) -> "AuditReport":
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
