"""Retrieval metrics of the SHREC 2018 evaluation (PR, F/E@32, CG/DCG/NDCG, NN/FT/ST, mAP) from a distance matrix.

Every metric is per query and then averaged over queries, computed from the ranked relevance list of
each query: targets sorted by ascending distance, relevance 1 when the target's class equals the query's.

* Ties in distance are broken by ascending target index (``np.argsort(kind="stable")``), so the result
  depends only on the matrix, never on the sort implementation.
* ``exclude_self``: when queries and targets are the same set (square matrix), query i is removed from its
  own ranked list before anything is computed, so the list has T - 1 entries and a class of |C| members
  gives |C| - 1 relevant targets (the paper's K = |C| - 1 for the first tier). It defaults to True exactly
  when ``target_labels`` is omitted.
* "Relevant count" ``n_rel`` of a query = number of relevant targets in its ranked list (|C| - 1 with
  self-exclusion, |C| for a query from another set, e.g. a sketch against 3D scenes). Queries with
  ``n_rel == 0`` have undefined recall; they are left out of every average and counted in the report.
* Work is done in chunks of queries, so memory stays O(chunk x targets) for thousands of queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

DEFAULT_RECALL_LEVELS = np.linspace(0.0, 1.0, 11)  # TREC 11-point interpolation
E_MEASURE_DEPTH = 32  # "only the first 32 retrieved objects for every query"
DEFAULT_CHUNK_QUERIES = 512
_RECALL_TOLERANCE = 1e-9  # r * n_rel is compared with a hit count; absorbs 0.1 * 30 = 3.0000000000000004


@dataclass(frozen=True)
class _RankedChunk:
    """Ranked relevance of a block of queries (only queries with at least one relevant target)."""

    relevance: np.ndarray  # (c, R) bool, column r = rank r + 1
    hits: np.ndarray  # (c, R) int, relevant targets within the first r + 1 ranks
    n_relevant: np.ndarray  # (c,) int >= 1


@dataclass(frozen=True)
class _Problem:
    distances: np.ndarray  # (Q, T) float64
    query_codes: np.ndarray  # (Q,) int
    target_codes: np.ndarray  # (T,) int
    exclude_self: bool
    n_relevant: np.ndarray  # (Q,) int


def _prepare(distances, query_labels, target_labels, exclude_self: bool | None) -> _Problem:
    d = np.asarray(distances, dtype=np.float64)
    if d.ndim != 2:
        raise ValueError(f"distances must be a (queries, targets) matrix, got shape {d.shape}")
    if np.isnan(d).any():
        raise ValueError("distances contain NaN; use +inf for 'never retrieve'")
    ql = np.asarray(query_labels).reshape(-1)
    tl = ql if target_labels is None else np.asarray(target_labels).reshape(-1)
    if exclude_self is None:
        exclude_self = target_labels is None
    if len(ql) != d.shape[0] or len(tl) != d.shape[1]:
        raise ValueError(f"distances shape {d.shape} does not match {len(ql)} query and {len(tl)} target labels")
    if exclude_self and d.shape[0] != d.shape[1]:
        raise ValueError(f"exclude_self needs a square matrix (queries = targets), got shape {d.shape}")
    _, codes = np.unique(np.concatenate([ql, tl]), return_inverse=True)
    q_codes, t_codes = codes[: len(ql)], codes[len(ql) :]
    if exclude_self and np.any(q_codes != t_codes):
        bad = int(np.argmax(q_codes != t_codes))
        raise ValueError(f"exclude_self needs query i = target i, but the labels differ at index {bad}")
    if d.shape[1] - int(exclude_self) < 1:
        raise ValueError(f"no target left to rank for distances of shape {d.shape}")
    n_rel = np.bincount(t_codes, minlength=codes.max() + 1)[q_codes] - int(exclude_self)
    if not np.any(n_rel > 0):
        raise ValueError("no query has a relevant target; every retrieval metric is undefined")
    return _Problem(d, q_codes, t_codes, bool(exclude_self), n_rel)


def _ranked_chunks(problem: _Problem, chunk_size: int) -> Iterator[_RankedChunk]:
    """Rank every query with a relevant target, ``chunk_size`` queries at a time."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    queries = np.flatnonzero(problem.n_relevant > 0)
    for start in range(0, len(queries), chunk_size):
        rows = queries[start : start + chunk_size]
        order = np.argsort(problem.distances[rows], axis=1, kind="stable")
        if problem.exclude_self:
            order = order[order != rows[:, None]].reshape(len(rows), -1)  # exactly one self per row
        relevance = problem.target_codes[order] == problem.query_codes[rows][:, None]
        yield _RankedChunk(relevance, np.cumsum(relevance, axis=1), problem.n_relevant[rows])


_PerQuery = Callable[[_RankedChunk], np.ndarray]


def _mean_over_queries(
    problem: _Problem, per_query: dict[str, _PerQuery], chunk_size: int
) -> dict[str, np.ndarray]:
    """Average each per-query quantity (scalar or curve) over the queries with a relevant target."""
    sums: dict[str, np.ndarray] = {}
    count = 0
    for chunk in _ranked_chunks(problem, chunk_size):
        count += len(chunk.n_relevant)
        for name, fn in per_query.items():
            part = np.sum(fn(chunk), axis=0, dtype=np.float64)
            sums[name] = part if name not in sums else sums[name] + part
    return {name: total / count for name, total in sums.items()}


# ---- per-query definitions (one line of maths each) -------------------------------------------------


def _nearest_neighbor(c: _RankedChunk) -> np.ndarray:
    """NN = relevance of rank 1 (K = 1)."""
    return c.relevance[:, 0].astype(np.float64)


def _tier(c: _RankedChunk, factor: int) -> np.ndarray:
    """Tier = (relevant in the first factor * n_rel ranks) / n_rel; FT: factor 1, ST: factor 2."""
    k = np.minimum(factor * c.n_relevant, c.hits.shape[1])
    return c.hits[np.arange(len(k)), k - 1] / c.n_relevant


def _average_precision(c: _RankedChunk) -> np.ndarray:
    """AP = (1 / n_rel) * sum over relevant ranks k of precision@k."""
    ranks = np.arange(1, c.hits.shape[1] + 1)
    return np.sum((c.hits / ranks) * c.relevance, axis=1) / c.n_relevant


def _f_measure(c: _RankedChunk, depth: int, beta: float) -> np.ndarray:
    """F_beta = (1 + beta^2) P R / (beta^2 P + R) with P, R over the first ``depth`` ranks (0 when no hit)."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    k = min(depth, c.hits.shape[1])
    hits = c.hits[:, k - 1].astype(np.float64)
    precision, recall = hits / k, hits / c.n_relevant
    denom = beta**2 * precision + recall
    return np.divide((1 + beta**2) * precision * recall, denom, out=np.zeros_like(denom), where=denom > 0)


def _dcg_weights(length: int) -> np.ndarray:
    """Discount of rank i (base 2, Jarvelin-Kekalainen): 1 for i = 1, 1 / log2(i) for i >= 2."""
    ranks = np.arange(1, length + 1, dtype=np.float64)
    return 1.0 / np.log2(np.maximum(ranks, 2.0))


def _dcg_curve(c: _RankedChunk) -> np.ndarray:
    """DCG[i] = DCG[i-1] + G[i] / log2(i) (DCG[1] = G[1]), for every rank i."""
    return np.cumsum(c.relevance * _dcg_weights(c.relevance.shape[1]), axis=1)


def _ideal_dcg_curve(c: _RankedChunk) -> np.ndarray:
    """DCG of the ideal gain vector: n_rel ones then zeros."""
    cum_weights = np.cumsum(_dcg_weights(c.relevance.shape[1]))
    ranks = np.arange(1, c.relevance.shape[1] + 1)
    return cum_weights[np.minimum(ranks[None, :], c.n_relevant[:, None]) - 1]


def _ndcg_curve(c: _RankedChunk) -> np.ndarray:
    return _dcg_curve(c) / _ideal_dcg_curve(c)


def _ndcg(c: _RankedChunk) -> np.ndarray:
    """NDCG = DCG / ideal DCG at the last rank (the single number SHREC tables call 'DCG')."""
    return _ndcg_curve(c)[:, -1]


def _interpolated_precision(c: _RankedChunk, recall_levels: np.ndarray) -> np.ndarray:
    """P_interp(r) = max precision@k over ranks k with recall@k >= r, at each recall level r."""
    ranks = np.arange(1, c.hits.shape[1] + 1)
    precision = c.hits / ranks
    best_from_here = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
    out = np.empty((len(c.n_relevant), len(recall_levels)))
    rows = np.arange(len(c.n_relevant))
    for j, level in enumerate(recall_levels):
        needed_hits = np.ceil(level * c.n_relevant - _RECALL_TOLERANCE)
        first_rank = np.sum(c.hits < needed_hits[:, None], axis=1)  # hits is non-decreasing along ranks
        out[:, j] = best_from_here[rows, first_rank]
    return out


def _check_recall_levels(recall_levels) -> np.ndarray:
    levels = np.asarray(recall_levels, dtype=np.float64).reshape(-1)
    if len(levels) == 0 or levels.min() < 0 or levels.max() > 1:
        raise ValueError(f"recall levels must be a non-empty list within [0, 1], got {levels}")
    return levels


# ---- public API ---------------------------------------------------------------------------------------
# Every function takes (distances (Q, T), query_labels (Q,), target_labels (T,) or None) and the keywords
# exclude_self (None = auto: True iff target_labels is None) and chunk_size (queries ranked at a time).


def _mean(per_query: _PerQuery, distances, query_labels, target_labels, exclude_self, chunk_size) -> np.ndarray:
    problem = _prepare(distances, query_labels, target_labels, exclude_self)
    return _mean_over_queries(problem, {"mean": per_query}, chunk_size)["mean"]


def nearest_neighbor(
    distances, query_labels, target_labels=None, *, exclude_self=None, chunk_size=DEFAULT_CHUNK_QUERIES
) -> float:
    """Fraction of queries whose closest target is of their class."""
    return float(_mean(_nearest_neighbor, distances, query_labels, target_labels, exclude_self, chunk_size))


def first_tier(
    distances, query_labels, target_labels=None, *, exclude_self=None, chunk_size=DEFAULT_CHUNK_QUERIES
) -> float:
    """Recall within the first n_rel results (K = |C| - 1 with self-exclusion)."""
    fn = partial(_tier, factor=1)
    return float(_mean(fn, distances, query_labels, target_labels, exclude_self, chunk_size))


def second_tier(
    distances, query_labels, target_labels=None, *, exclude_self=None, chunk_size=DEFAULT_CHUNK_QUERIES
) -> float:
    """Relevant targets within the first 2 * n_rel results over n_rel (K = 2(|C| - 1) with self-exclusion)."""
    fn = partial(_tier, factor=2)
    return float(_mean(fn, distances, query_labels, target_labels, exclude_self, chunk_size))


def mean_average_precision(
    distances, query_labels, target_labels=None, *, exclude_self=None, chunk_size=DEFAULT_CHUNK_QUERIES
) -> float:
    """Mean over queries of non-interpolated average precision over the full ranked list."""
    return float(_mean(_average_precision, distances, query_labels, target_labels, exclude_self, chunk_size))


def f_measure(
    distances, query_labels, target_labels=None, *, exclude_self=None, depth=E_MEASURE_DEPTH, beta=1.0,
    chunk_size=DEFAULT_CHUNK_QUERIES,
) -> float:
    """Mean F_beta of precision and recall over the first ``depth`` results (higher is better).

    This is the number SHREC result tables print in their "E-Measure" column ("higher values indicate
    better results"). With fewer than ``depth`` targets the whole list is used.
    """
    fn = partial(_f_measure, depth=depth, beta=beta)
    return float(_mean(fn, distances, query_labels, target_labels, exclude_self, chunk_size))


def e_measure(
    distances, query_labels, target_labels=None, *, exclude_self=None, depth=E_MEASURE_DEPTH, beta=1.0,
    chunk_size=DEFAULT_CHUNK_QUERIES,
) -> float:
    """Van Rijsbergen's E = 1 - F_beta over the first ``depth`` results (lower is better): the paper's formula."""
    return 1.0 - f_measure(
        distances, query_labels, target_labels, exclude_self=exclude_self, depth=depth, beta=beta,
        chunk_size=chunk_size,
    )


def _hits(c: _RankedChunk) -> np.ndarray:
    return c.hits


def cumulated_gain(
    distances, query_labels, target_labels=None, *, exclude_self=None, chunk_size=DEFAULT_CHUNK_QUERIES
) -> np.ndarray:
    """Mean CG vector: CG[i] = number of relevant targets within the first i ranks (binary gain)."""
    return _mean(_hits, distances, query_labels, target_labels, exclude_self, chunk_size)


def discounted_cumulated_gain(
    distances, query_labels, target_labels=None, *, exclude_self=None, chunk_size=DEFAULT_CHUNK_QUERIES
) -> np.ndarray:
    """Mean DCG vector: DCG[1] = G[1], DCG[i] = DCG[i-1] + G[i] / log2(i)."""
    return _mean(_dcg_curve, distances, query_labels, target_labels, exclude_self, chunk_size)


def normalized_dcg(
    distances, query_labels, target_labels=None, *, exclude_self=None, chunk_size=DEFAULT_CHUNK_QUERIES
) -> float:
    """Mean over queries of DCG / ideal DCG at the end of the ranked list."""
    return float(_mean(_ndcg, distances, query_labels, target_labels, exclude_self, chunk_size))


def precision_recall_curve(
    distances, query_labels, target_labels=None, *, exclude_self=None, recall_levels=DEFAULT_RECALL_LEVELS,
    chunk_size=DEFAULT_CHUNK_QUERIES,
) -> tuple[np.ndarray, np.ndarray]:
    """(recall levels, mean interpolated precision at each level); default 11 levels 0, 0.1, ..., 1."""
    levels = _check_recall_levels(recall_levels)
    fn = partial(_interpolated_precision, recall_levels=levels)
    return levels, _mean(fn, distances, query_labels, target_labels, exclude_self, chunk_size)


_REPORT_SCALARS = ("nn", "ft", "st", "map", "f_measure", "ndcg")
_REPORT_CURVES = ("pr_precision", "cg_curve", "dcg_curve", "ndcg_curve")


def retrieval_report(
    distances, query_labels, target_labels=None, *, exclude_self: bool | None = None,
    recall_levels=DEFAULT_RECALL_LEVELS, depth: int = E_MEASURE_DEPTH, beta: float = 1.0,
    chunk_size: int = DEFAULT_CHUNK_QUERIES,
) -> dict:
    """All metrics from one ranking pass.

    Scalars: nn, ft, st, map, f_measure, e_measure (= 1 - f_measure), dcg (mean raw DCG at the last rank),
    ndcg, n_queries (averaged over), n_queries_skipped (no relevant target). Arrays: pr_recall,
    pr_precision, cg_curve, dcg_curve, ndcg_curve (mean over queries, one value per rank).
    """
    levels = _check_recall_levels(recall_levels)
    problem = _prepare(distances, query_labels, target_labels, exclude_self)
    per_query: dict[str, _PerQuery] = {
        "nn": _nearest_neighbor,
        "ft": partial(_tier, factor=1),
        "st": partial(_tier, factor=2),
        "map": _average_precision,
        "f_measure": partial(_f_measure, depth=depth, beta=beta),
        "ndcg": _ndcg,
        "pr_precision": partial(_interpolated_precision, recall_levels=levels),
        "cg_curve": _hits,
        "dcg_curve": _dcg_curve,
        "ndcg_curve": _ndcg_curve,
    }
    means = _mean_over_queries(problem, per_query, chunk_size)
    n_used = int(np.count_nonzero(problem.n_relevant > 0))
    report: dict = {name: float(means[name]) for name in _REPORT_SCALARS}
    report["e_measure"] = 1.0 - report["f_measure"]
    report["dcg"] = float(means["dcg_curve"][-1])
    report["n_queries"] = n_used
    report["n_queries_skipped"] = len(problem.n_relevant) - n_used
    report["pr_recall"] = levels
    report.update({name: means[name] for name in _REPORT_CURVES})
    return report
