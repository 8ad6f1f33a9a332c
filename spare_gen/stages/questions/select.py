"""Model assignment: split sizes, per-stratum quotas, the model queue, and exactly balanced labels.

Every (task, split) gets its questions spread over the primitive-count strata as evenly as possible
(counts differ by at most one, the odd ones rotating so the totals stay even too); each stratum has
one queue of usable models in a seeded order, and models are dealt out of it once, so no model is
used twice in the whole dataset. With ``questions.model_reuse = "per_task"`` each task has its own queues, one per
split and stratum (``split_blocks``: each stratum's models in the seeded order, cut into consecutive blocks by the
split fractions), so every task uses the same models first and a model keeps its split in every task.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from fractions import Fraction
from typing import Hashable, Iterable, Mapping, Sequence

import numpy as np

from spare_gen.rng import derive_seed

Stratum = int | None  # n_primitives; None for file models (one stratum)
QuotaKey = tuple[str, str, Stratum]  # (task, split, stratum)
QueueKey = Stratum | tuple[str, Stratum]  # a stratum, or (split, stratum) with model reuse across tasks


class NotEnoughModels(ValueError):
    """The requested questions need more usable models than the drawing stage produced."""


def split_sizes(n: int, ratios: Sequence[float]) -> list[int]:
    """``n`` items split by ``ratios`` with the largest-remainder method (ties go to the earlier split)."""
    total = float(sum(ratios))
    if n < 0 or total <= 0 or any(r < 0 for r in ratios):
        raise ValueError(f"cannot split {n!r} items by ratios {tuple(ratios)!r}")
    exact = [n * r / total for r in ratios]
    sizes = [math.floor(x) for x in exact]
    order = sorted(range(len(ratios)), key=lambda i: (-(exact[i] - sizes[i]), i))
    for i in order[: n - sum(sizes)]:
        sizes[i] += 1
    return sizes


def split_ratio(ratios: Sequence[float]) -> str:
    """``ratios`` as the smallest whole numbers in the same proportion, e.g. (0.8, 0.1, 0.1) -> "8:1:1"; fractions
    with no such small ratio as percentages, e.g. "33.3 % / 33.3 % / 33.3 %"."""
    fractions = [Fraction(str(r)).limit_denominator(1000) for r in ratios]
    scale = math.lcm(*(f.denominator for f in fractions))
    whole = [int(f * scale) for f in fractions]
    common = math.gcd(*whole) or 1
    if all(abs(float(f) - r) < 1e-9 for f, r in zip(fractions, ratios)) and max(whole) // common <= 100:
        return ":".join(str(w // common) for w in whole)
    total = float(sum(ratios))
    return " / ".join(f"{100 * r / total:.3g} %" for r in ratios)


def spread(n: int, keys: Sequence[Hashable], start: int = 0) -> dict:
    """``n`` spread over ``keys`` evenly; the ``n % len(keys)`` extras go to keys from index ``start`` on."""
    k = len(keys)
    base, extra = divmod(n, k)
    out = {key: base for key in keys}
    for i in range(extra):
        out[keys[(start + i) % k]] += 1
    return out


def plan_quotas(
    counts: Mapping[str, int], ratios: Sequence[float], splits: Sequence[str], strata: Sequence[Stratum]
) -> dict[QuotaKey, int]:
    """Questions per (task, split, stratum), in task, split, stratum order."""
    if not strata:
        raise ValueError("no strata: there are no usable models")
    quotas: dict[QuotaKey, int] = {}
    cursor = 0
    for task, n in counts.items():
        for split, size in zip(splits, split_sizes(n, ratios)):
            for stratum, q in spread(size, list(strata), cursor).items():
                quotas[(task, split, stratum)] = q
            cursor += size % len(strata)
    return quotas


def needs_by_stratum(quotas: Mapping[QuotaKey, int]) -> dict[Stratum, int]:
    out: dict[Stratum, int] = {}
    for (_, _, stratum), q in quotas.items():
        out[stratum] = out.get(stratum, 0) + q
    return out


def needs_by_split(quotas: Mapping[QuotaKey, int]) -> dict[tuple[str, Stratum], int]:
    """Models each (split, stratum) block must hold when every task draws from it: the largest task's quota."""
    out: dict[tuple[str, Stratum], int] = {}
    for (_, split, stratum), q in quotas.items():
        out[(split, stratum)] = max(out.get((split, stratum), 0), q)
    return out


def stratum_label(stratum: Stratum) -> str:
    return "file models" if stratum is None else f"{stratum}-primitive models"


def queue_label(key: QueueKey) -> str:
    return f"{key[0]} {stratum_label(key[1])}" if isinstance(key, tuple) else stratum_label(key)


def shortage(quotas: Mapping[QuotaKey, int], available: Mapping[QueueKey, int], by_split: bool = False) -> str:
    """'' if every stratum (``by_split``: every split's block of it) has enough usable models, else a one-line
    description of what is missing."""
    needs = needs_by_split(quotas) if by_split else needs_by_stratum(quotas)
    short = [(s, n, available.get(s, 0)) for s, n in needs.items() if n > available.get(s, 0)]
    if not short:
        return ""
    parts = [f"{queue_label(s)}: need {n}, usable {a}" for s, n, a in short]
    total_need, total_have = sum(needs.values()), sum(available.get(s, 0) for s in needs)
    return f"the requested questions need {total_need} usable models, {total_have} are usable ({'; '.join(parts)})"


def fit_counts(
    counts: Mapping[str, int], ratios: Sequence[float], splits: Sequence[str], available: Mapping[QueueKey, int],
    by_split: bool = False,
) -> dict[str, int]:
    """The largest uniformly scaled-down counts whose quotas fit the available models (for allow_fewer)."""
    # a key is a stratum, or (split, stratum) when by_split
    strata = sorted({k[1] if isinstance(k, tuple) else k for k in available}, key=lambda s: -1 if s is None else s)

    def scaled(f: float) -> dict[str, int]:
        return {t: int(math.floor(n * f + 1e-9)) for t, n in counts.items()}

    lo, hi = 0.0, 1.0
    if not shortage(plan_quotas(scaled(hi), ratios, splits, strata), available, by_split):
        return scaled(hi)
    for _ in range(50):
        mid = (lo + hi) / 2
        if shortage(plan_quotas(scaled(mid), ratios, splits, strata), available, by_split):
            hi = mid
        else:
            lo = mid
    return scaled(lo)


def model_order(model_ids: Iterable[str], seed: int) -> list[str]:
    """Models in a seeded order that does not change when other models are added or removed."""
    return sorted(model_ids, key=lambda m: (derive_seed(seed, "questions", "order", m), m))


def split_blocks(models_by_stratum: Mapping[Stratum, Sequence[str]], ratios: Sequence[float],
                 splits: Sequence[str], seed: int) -> dict[tuple[str, Stratum], list[str]]:
    """(split, stratum) -> its models: each stratum's models in the seeded order, cut into consecutive blocks sized
    by ``ratios`` (``split_sizes``), so a model's split depends on the seed and its stratum's models only."""
    out: dict[tuple[str, Stratum], list[str]] = {}
    for stratum, ids in models_by_stratum.items():
        ordered = model_order(ids, seed)
        ends = list(itertools.accumulate(split_sizes(len(ordered), ratios)))
        for split, a, b in zip(splits, [0] + ends[:-1], ends):
            out[(split, stratum)] = ordered[a:b]
    return out


class ModelQueues:
    """One queue of unused models per stratum, or per (split, stratum) block (``by_split``, ``split_blocks``);
    ``take`` deals models out, each at most once."""

    def __init__(self, models: Mapping[QueueKey, Sequence[str]], seed: int, by_split: bool = False):
        self._queues = {s: deque(model_order(ids, seed)) for s, ids in models.items()}
        self.by_split = by_split

    def take(self, key: QueueKey, n: int) -> list[str]:
        q = self._queues.get(key, deque())
        return [q.popleft() for _ in range(min(n, len(q)))]

    def take_for(self, quota: QuotaKey, n: int) -> list[str]:
        """``take`` from the queue of a (task, split, stratum) quota: its stratum's, or its split's block of it."""
        return self.take(quota[1:] if self.by_split else quota[2], n)

    def remaining(self, key: QueueKey) -> int:
        return len(self._queues.get(key, ()))


def balanced_labels(n: int, k: int, rng: np.random.Generator) -> list[int]:
    """``n`` labels in 0..k-1, each occurring floor(n/k) or ceil(n/k) times, in random order.

    Which labels get the extra occurrences is random too, so no answer is favoured across splits.
    """
    if k <= 0:
        raise ValueError(f"number of labels must be > 0 (got {k!r})")
    base, extra = divmod(n, k)
    labels = np.repeat(np.arange(k), base)
    labels = np.concatenate([labels, rng.permutation(k)[:extra]])
    return [int(x) for x in rng.permutation(labels)]


def balanced_choice(options: Sequence[Sequence[int]], values: Sequence[int], rng: np.random.Generator) -> list[int]:
    """One value per item from its allowed ``options``, greedily keeping the value counts as even as possible.

    Each item takes, among its options, a value used least so far (ties broken at random); when every
    item allows every value the counts differ by at most one.
    """
    counts = {v: 0 for v in values}
    out = []
    for allowed in options:
        allowed = [v for v in values if v in set(allowed)]
        if not allowed:
            raise ValueError("an item has no allowed value")
        low = min(counts[v] for v in allowed)
        best = [v for v in allowed if counts[v] == low]
        choice = best[int(rng.integers(len(best)))]
        counts[choice] += 1
        out.append(choice)
    return out
