"""Corruptions of a ground-truth wireframe at three severities (Pool2 of the wireframe-metrics paper).

The design follows bethgelab/imagecorruptions: a tiny public API (:func:`corrupt`,
:func:`get_corruption_names`) and one visible table of per-severity constants
(:data:`SEVERITY_TABLE`). Unlike it, every corruption is a pure function of its inputs and a
caller-supplied ``numpy.random.Generator`` (no global random state), and every displacement is
expressed in units of the model's size (its bounding-box diagonal, :func:`model_size`), so a severity
means the same thing on a 10 mm bracket and on a 10 m house, and on a part with two long edges as on
one with a thousand tiny arc segments. (Relative to the median CAD-edge length, as before, the noise
ran from 0.026 to 2.24 diagonals across models: invisible on some, off the canvas on others.)

Calibration. A moved point moves by a length drawn uniformly from ``[shift, SHIFT_SPREAD * shift]``
diagonals in a uniformly random 3D direction: never less than ``shift`` (so ``low`` is visible: at the
default 384 px picture 0.012 diagonals is at least 3 px), never more than :data:`MAX_SHIFT` (so a
picture framing the ground truth's box padded by :data:`MAX_SHIFT` on every side holds every vertex of
every corruption, in any view). The measured effect of each severity is in the pool's README.

Corruptions (semantics from the paper, Sec. 2 "Pool2"):

* ``deform``  - split edges into ``splits`` pieces and move the new inner points; the original
  vertices stay where they are, so the connected components are exactly those of the input.
  New points have kind ``CURVE`` (they are inner points of a polyline, like a discretised curve).
* ``perturb`` - split vertices into ``splits`` copies, each shifted randomly; every incident edge
  goes to one copy at random (each copy gets at least one edge when the degree allows).
  Copies keep the kind of the vertex they come from.
* ``add``     - add wrong edges between existing, not yet connected vertices (no self-loops).
* ``remove``  - delete vertices and all their edges; the remaining vertices are renumbered in order.

Every corruption affects at least one element, so ``low`` is never the identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Callable

import numpy as np

from spare_gen.wireframe import CURVE, Wireframe


class Severity(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class CorruptionKind(StrEnum):
    DEFORM = "deform"
    PERTURB = "perturb"
    ADD = "add"
    REMOVE = "remove"


SEVERITIES: tuple[str, ...] = tuple(s.value for s in Severity)


@dataclass(frozen=True)
class SeverityParams:
    """``fraction`` of edges (deform, add) or vertices (perturb, remove) affected; ``splits`` pieces per
    edge (deform) or copies per vertex (perturb); ``shift`` = the smallest displacement of a moved point
    in units of :func:`model_size` (the largest is ``SHIFT_SPREAD * shift``)."""

    fraction: float
    splits: int = 1
    shift: float = 0.0  # in bounding-box diagonals of the ground truth


# The one table of severity constants. ``add`` counts wrong edges as a fraction of the GT edge count.
# Shifts are in bounding-box diagonals (pool thresholds are 0.02 diagonals: low moves points by about
# the threshold, high by two to three times it).
SEVERITY_TABLE: dict[CorruptionKind, dict[Severity, SeverityParams]] = {
    CorruptionKind.DEFORM: {
        Severity.LOW: SeverityParams(fraction=0.15, splits=2, shift=0.012),
        Severity.MEDIUM: SeverityParams(fraction=0.35, splits=3, shift=0.025),
        Severity.HIGH: SeverityParams(fraction=0.70, splits=4, shift=0.040),
    },
    CorruptionKind.PERTURB: {
        Severity.LOW: SeverityParams(fraction=0.10, splits=2, shift=0.012),
        Severity.MEDIUM: SeverityParams(fraction=0.25, splits=2, shift=0.025),
        Severity.HIGH: SeverityParams(fraction=0.50, splits=3, shift=0.040),
    },
    CorruptionKind.ADD: {
        Severity.LOW: SeverityParams(fraction=0.10),
        Severity.MEDIUM: SeverityParams(fraction=0.25),
        Severity.HIGH: SeverityParams(fraction=0.50),
    },
    CorruptionKind.REMOVE: {
        Severity.LOW: SeverityParams(fraction=0.10),
        Severity.MEDIUM: SeverityParams(fraction=0.20),
        Severity.HIGH: SeverityParams(fraction=0.40),
    },
}
SHIFT_SPREAD = 1.5  # a moved point moves by shift .. SHIFT_SPREAD * shift diagonals
MAX_SHIFT = SHIFT_SPREAD * max(p.shift for table in SEVERITY_TABLE.values() for p in table.values())

# Below this many vertex pairs ``add`` enumerates the free pairs; above it, it rejection-samples.
ENUMERATE_PAIRS_LIMIT = 1_000_000

NEW_VERTEX = -1  # ``source_vertex`` value of a vertex that no GT vertex maps to (deform split points)


@dataclass(frozen=True)
class Corrupted:
    """A corrupted wireframe plus ``source_vertex[i]``: the GT vertex output vertex ``i`` comes from
    (its copy, survivor or itself), or ``NEW_VERTEX`` for a point created on a split edge."""

    wireframe: Wireframe
    source_vertex: np.ndarray


class TargetedMetric(StrEnum):
    """The score a corruption attacks (``spare_gen.rating.calibration.targeted_score``)."""

    EDGE_F1 = "edge_f1"
    VERTEX_F1 = "vertex_f1"  # over every vertex, corner and curve points alike


CorruptionFn = Callable[[Wireframe, SeverityParams, np.random.Generator, float], Corrupted]
_REGISTRY: dict[CorruptionKind, CorruptionFn] = {}
TARGETED_METRIC: dict[CorruptionKind, TargetedMetric] = {}  # what each kind attacks, given at its registration
KIND_COLOURS: dict[CorruptionKind, tuple[int, int, int]] = {}  # its colour in ranking plots (colour-blind safe)


def _register(kind: CorruptionKind, targets: TargetedMetric, colour: tuple[int, int, int]
              ) -> Callable[[CorruptionFn], CorruptionFn]:
    def wrap(fn: CorruptionFn) -> CorruptionFn:
        _REGISTRY[kind], TARGETED_METRIC[kind], KIND_COLOURS[kind] = fn, targets, colour
        return fn

    return wrap


def get_corruption_names() -> list[str]:
    return [k.value for k in _REGISTRY]


def parse_severity(severity: str | Severity) -> Severity:
    try:
        return Severity(severity)
    except ValueError:
        raise ValueError(f"unknown severity {severity!r}; choose from {', '.join(SEVERITIES)}") from None


def parse_kind(name: str | CorruptionKind) -> CorruptionKind:
    try:
        kind = CorruptionKind(name)
    except ValueError:
        kind = None
    if kind not in _REGISTRY:
        raise ValueError(f"unknown corruption {name!r}; choose from {', '.join(get_corruption_names())}")
    return kind


def model_size(wireframe: Wireframe) -> float:
    """The wireframe's scale: its bounding-box diagonal (1 for a single point)."""
    with np.errstate(over="ignore", invalid="ignore"):  # huge coordinates give inf, reported below
        size = float(np.linalg.norm(np.ptp(wireframe.vertices, axis=0))) if wireframe.n_vertices else 0.0
    if not np.isfinite(size):
        raise ValueError(f"wireframe scale is not finite ({size}); coordinates are too large")
    return size if size > 0 else 1.0


def random_shifts(rng: np.random.Generator, shape: tuple[int, ...], shift: float, size: float) -> np.ndarray:
    """``shape + (3,)`` displacements: uniform random directions, lengths uniform in
    ``[shift, SHIFT_SPREAD * shift] * size``."""
    direction = rng.normal(size=(*shape, 3))
    norm = np.linalg.norm(direction, axis=-1, keepdims=True)
    direction = np.where(norm > 0, direction / np.where(norm > 0, norm, 1.0), np.array([1.0, 0.0, 0.0]))
    length = rng.uniform(shift, SHIFT_SPREAD * shift, size=(*shape, 1)) * size
    return direction * length


def corrupt_with_source(
    wireframe: Wireframe, name: str, severity: str, rng: np.random.Generator
) -> Corrupted:
    """Like :func:`corrupt`, also returning where each output vertex comes from."""
    kind, level = parse_kind(name), parse_severity(severity)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    wireframe.validate()
    return _REGISTRY[kind](wireframe, SEVERITY_TABLE[kind][level], rng, model_size(wireframe))


def corrupt(wireframe: Wireframe, name: str, severity: str, rng: np.random.Generator) -> Wireframe:
    """Return ``wireframe`` corrupted by ``name`` (see :func:`get_corruption_names`) at ``severity``."""
    return corrupt_with_source(wireframe, name, severity, rng).wireframe


def _affected_count(fraction: float, n: int, upper: int) -> int:
    """round(fraction * n) (Python's half-to-even), at least 1, at most ``upper``."""
    return int(min(upper, max(1, round(fraction * n))))


@_register(CorruptionKind.DEFORM, TargetedMetric.EDGE_F1, (0, 114, 178))  # Okabe-Ito blue
def _deform(wf: Wireframe, p: SeverityParams, rng: np.random.Generator, scale: float) -> Corrupted:
    splittable = np.flatnonzero(wf.edges[:, 0] != wf.edges[:, 1])
    if len(splittable) == 0:
        raise ValueError("cannot deform: wireframe has no edge between two distinct vertices")
    count = _affected_count(p.fraction, wf.n_edges, len(splittable))
    chosen = np.sort(rng.choice(splittable, size=count, replace=False))
    n_inner = p.splits - 1
    a, b = wf.vertices[wf.edges[chosen, 0]], wf.vertices[wf.edges[chosen, 1]]
    t = (np.arange(1, p.splits) / p.splits)[None, :, None]  # evenly spaced, then jittered
    inner = a[:, None, :] + t * (b - a)[:, None, :]
    inner = inner + random_shifts(rng, inner.shape[:2], p.shift, scale)
    new_ids = wf.n_vertices + np.arange(count * n_inner).reshape(count, n_inner)
    chains = np.concatenate([wf.edges[chosen, :1], new_ids, wf.edges[chosen, 1:]], axis=1)
    chain_edges = np.stack([chains[:, :-1], chains[:, 1:]], axis=-1).reshape(-1, 2)
    keep = np.ones(wf.n_edges, dtype=bool)
    keep[chosen] = False
    vertices = np.concatenate([wf.vertices, inner.reshape(-1, 3)])
    kinds = np.concatenate([wf.kinds, np.full(count * n_inner, CURVE, dtype=np.uint8)])
    source = np.concatenate([np.arange(wf.n_vertices), np.full(count * n_inner, NEW_VERTEX)])
    return Corrupted(Wireframe(vertices, np.concatenate([wf.edges[keep], chain_edges]), kinds), source)


@_register(CorruptionKind.PERTURB, TargetedMetric.VERTEX_F1, (230, 159, 0))  # orange
def _perturb(wf: Wireframe, p: SeverityParams, rng: np.random.Generator, scale: float) -> Corrupted:
    n = wf.n_vertices
    count = _affected_count(p.fraction, n, n)
    chosen = np.sort(rng.choice(n, size=count, replace=False))
    n_extra = p.splits - 1
    # copies[i] = vertex ids of the copies of chosen[i]: the original id first, then appended ones
    copies = np.concatenate([chosen[:, None], n + np.arange(count * n_extra).reshape(count, n_extra)], axis=1)
    shifted = wf.vertices[chosen][:, None, :] + random_shifts(rng, (count, p.splits), p.shift, scale)

    flat = wf.edges.ravel()  # endpoint slots; slot s belongs to edge s // 2
    slot_order = np.argsort(flat, kind="stable")
    starts = np.searchsorted(flat[slot_order], chosen, side="left")
    stops = np.searchsorted(flat[slot_order], chosen, side="right")
    new_flat = flat.copy()
    for i in range(count):
        slots = rng.permutation(slot_order[starts[i] : stops[i]])
        which = np.empty(len(slots), dtype=np.int64)
        head = min(len(slots), p.splits)
        which[:head] = np.arange(head)  # each copy gets an edge while edges last
        which[head:] = rng.integers(0, p.splits, size=len(slots) - head)
        new_flat[slots] = copies[i, which]

    vertices = wf.vertices.copy()
    vertices[chosen] = shifted[:, 0]
    vertices = np.concatenate([vertices, shifted[:, 1:].reshape(-1, 3)])
    kinds = np.concatenate([wf.kinds, np.repeat(wf.kinds[chosen], n_extra)])
    source = np.concatenate([np.arange(n), np.repeat(chosen, n_extra)])
    return Corrupted(Wireframe(vertices, new_flat.reshape(-1, 2), kinds), source)


def _pair_codes(edges: np.ndarray, n: int) -> np.ndarray:
    """Direction-free integer code i * n + j (i < j) of each non-loop edge."""
    e = np.sort(edges, axis=1)
    e = e[e[:, 0] != e[:, 1]]
    return np.unique(e[:, 0] * n + e[:, 1])


def _free_pairs_enumerated(existing: np.ndarray, n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    i, j = np.triu_indices(n, k=1)
    free = np.flatnonzero(~np.isin(i * n + j, existing))
    pick = np.sort(rng.choice(free, size=count, replace=False))
    return np.stack([i[pick], j[pick]], axis=1)


def _free_pairs_sampled(existing: np.ndarray, n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """Rejection sampling for big sparse graphs, where almost every pair is free."""
    taken = set(existing.tolist())
    found: list[int] = []
    while len(found) < count:
        ij = np.sort(rng.integers(0, n, size=(2 * count, 2)), axis=1)
        for code in (ij[:, 0] * n + ij[:, 1]).tolist():
            if code // n != code % n and code not in taken:
                taken.add(code)
                found.append(code)
                if len(found) == count:
                    break
    codes = np.asarray(found, dtype=np.int64)
    return np.stack([codes // n, codes % n], axis=1)


@_register(CorruptionKind.ADD, TargetedMetric.EDGE_F1, (0, 158, 115))  # bluish green
def _add(wf: Wireframe, p: SeverityParams, rng: np.random.Generator, scale: float) -> Corrupted:
    n = wf.n_vertices
    existing = _pair_codes(wf.edges, n)
    n_pairs = n * (n - 1) // 2
    available = n_pairs - len(existing)
    if available <= 0:
        raise ValueError(f"cannot add edges: all {n_pairs} vertex pairs of the wireframe are already connected")
    count = _affected_count(p.fraction, wf.n_edges, available)
    # Sampling is cheap only when most pairs are free; small or dense graphs enumerate instead.
    if n_pairs <= ENUMERATE_PAIRS_LIMIT or available < n_pairs // 2:
        added = _free_pairs_enumerated(existing, n, count, rng)
    else:
        added = _free_pairs_sampled(existing, n, count, rng)
    edges = np.concatenate([wf.edges, added])
    return Corrupted(Wireframe(wf.vertices.copy(), edges, wf.kinds.copy()), np.arange(n))


@_register(CorruptionKind.REMOVE, TargetedMetric.VERTEX_F1, (204, 121, 167))  # reddish purple
def _remove(wf: Wireframe, p: SeverityParams, rng: np.random.Generator, scale: float) -> Corrupted:
    n = wf.n_vertices
    if n < 2:
        raise ValueError("cannot remove vertices: wireframe has a single vertex and must not become empty")
    count = _affected_count(p.fraction, n, n - 1)
    keep = np.ones(n, dtype=bool)
    keep[rng.choice(n, size=count, replace=False)] = False
    new_index = np.cumsum(keep) - 1
    edges = wf.edges[keep[wf.edges].all(axis=1)]
    kept = np.flatnonzero(keep)
    return Corrupted(Wireframe(wf.vertices[kept], new_index[edges], wf.kinds[kept]), kept)
