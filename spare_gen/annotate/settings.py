"""What shapes a rater's plan (``spare_gen.annotate.plan``), declared without numpy or pandas: ``spare-gen annotate
--help`` shows these defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """What shapes a plan; stored with it."""

    sanity: int = 40  # sanity pairs per rater (fewer when the pool has fewer)
    repeat_fraction: float = 0.05  # share of the pairs shown a second time
    break_every: int = 350  # a break prompt after every this many answers (0: never)
