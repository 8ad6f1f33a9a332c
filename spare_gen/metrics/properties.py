"""Metric property "unit tests" (ICCV 2025 metrics paper, Sec. 2 and Table 2) over a set of GT wireframes.

Every metric is turned into a dissimilarity d(pred, gt) (1 - score for higher-is-better metrics), and
each test checks one property per GT wireframe; the report gives the fraction of wireframes that pass.
Where the paper is silent we chose, and the constants below record the choices (normalised units):

* Monotonic (wrong edges, deform/split, moving vertex, disconnect edges, delete vertices, delete edges):
  up to :data:`STEPS` cumulative perturbations (:mod:`spare_gen.metrics.perturbations`); passes if
  d(step k, gt) rises strictly (by more than :data:`STRICT_EPS`) from step 0 (gt itself) through every step.
  Fewer steps are used when the wireframe has fewer candidates (e.g. vertices); no candidate: not applicable.
* Identity of indiscernibles: d(x', x) = 0 (within :data:`EXACT_TOL`), where x' is x with vertices
  permuted and edges shuffled and reversed: the same wireframe written differently.
* Near identity: d(x + noise, x) <= :data:`NEAR_IDENTITY_TOL` for noise of :data:`NEAR_IDENTITY_SIGMA`.
* Symmetry: |d(x, y) - d(y, x)| <= :data:`EXACT_TOL` with y = x plus weighted zero-mean vertex noise
  ("0 mean") or that noise plus a global shift ("shift"); "Near symmetry" repeats it with perturbations
  :data:`NEAR_SCALE` times smaller.
* Quasi-proportionality: the whole wireframe is shifted by k * step (k = 0..STEPS) in a random direction;
  passes if the successive differences of d are nearly constant (std <= :data:`PROPORTIONAL_CV` * |mean|
  + EXACT_TOL). A metric that ignores the shift entirely therefore passes, as in the paper's table.
  "far" steps exceed the matching tolerances at once; "close" steps cross them after several steps.
* Triangle inequality: d(z, x) <= d(z, y) + d(y, x) + EXACT_TOL with x = the GT and (y, z) = two other GT
  wireframes ("rand other"), two independent noisy copies ("add noise"), or two copies each missing an
  independent random 10 % of the edges ("del1/del2").

Randomness: ``derive_rng(seed, "properties", model_index, test_name)`` per test and wireframe.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, Optional, Sequence

import numpy as np
import pandas as pd

from spare_gen.metrics import perturbations as P
from spare_gen.metrics.wireframe import METRICS, evaluate_all, get_metric_names
from spare_gen.rng import derive_rng
from spare_gen.wireframes.model import Wireframe

STEPS = 10
STRICT_EPS = 1e-12
EXACT_TOL = 1e-9
NEAR_IDENTITY_SIGMA = 1e-6
NEAR_IDENTITY_TOL = 1e-3
SYMMETRY_SIGMA = 0.01
SYMMETRY_SHIFT = 0.05
NEAR_SCALE = 0.01
DEFORM_OFFSET = 0.05
MOVE_DISTANCE = 0.1
DISCONNECT_GAP = 0.01
SHIFT_STEP_FAR = 0.025
SHIFT_STEP_CLOSE = 0.003
PROPORTIONAL_CV = 0.1
TRIANGLE_NOISE_SIGMA = 0.01
TRIANGLE_EDGE_FRACTION = 0.1
PASS_RATE = 0.9  # a test is passed when at least this fraction of wireframes pass


class Category(str, Enum):
    MONOTONIC = "Monotonic"
    IDENTITY = "Identity"
    SYMMETRY = "Symmetry"
    QUASI_PROPORTIONALITY = "Quasi-proportionality"
    TRIANGLE = "Triangle ineq"


@dataclass
class Case:
    """What one test sees for one GT wireframe; ``dissim(pred, gt)`` returns one value per metric."""

    gt: Wireframe
    others: list[Wireframe]
    rng: np.random.Generator
    dissim: Callable[[Wireframe, Wireframe], np.ndarray]
    self_dissim: np.ndarray  # dissim(gt, gt), shared by the sequences' step 0


Outcome = Optional[np.ndarray]  # bool per metric, or None when the test does not apply to this wireframe
TestFn = Callable[[Case], Outcome]


def _monotonic(build: Callable[[Case], list[Wireframe]]) -> TestFn:
    def run(case: Case):
        seq = build(case)
        if len(seq) < 2:
            return None
        d = np.stack([case.self_dissim] + [case.dissim(w, case.gt) for w in seq[1:]])
        return np.all(np.diff(d, axis=0) > STRICT_EPS, axis=0)

    return run


def _identity(case: Case):
    return np.abs(case.dissim(P.relabel(case.gt, case.rng), case.gt)) <= EXACT_TOL


def _near_identity(case: Case):
    gt = case.gt
    noisy = Wireframe(gt.vertices + case.rng.normal(0.0, NEAR_IDENTITY_SIGMA, gt.vertices.shape), gt.edges, gt.kinds)
    return np.abs(case.dissim(noisy, case.gt)) <= NEAR_IDENTITY_TOL


def _symmetry(sigma: float, shift: float) -> TestFn:
    def run(case: Case):
        y = P.jitter(case.gt, case.rng, sigma, shift)
        return np.abs(case.dissim(case.gt, y) - case.dissim(y, case.gt)) <= EXACT_TOL

    return run


def _quasi_proportional(step: float) -> TestFn:
    def run(case: Case):
        direction = P.unit_vectors(case.rng.standard_normal(3))
        d = np.stack(
            [case.self_dissim]
            + [case.dissim(P.translate(case.gt, k * step * direction), case.gt) for k in range(1, STEPS + 1)]
        )
        diffs = np.diff(d, axis=0)
        return diffs.std(axis=0) <= PROPORTIONAL_CV * np.abs(diffs.mean(axis=0)) + EXACT_TOL

    return run


def _triangle(make: Callable[[Case], "tuple[Wireframe, Wireframe] | None"]) -> TestFn:
    def run(case: Case):
        yz = make(case)
        if yz is None:
            return None
        x, (y, z) = case.gt, yz
        return case.dissim(z, x) <= case.dissim(z, y) + case.dissim(y, x) + EXACT_TOL

    return run


def _two_others(case: Case):
    if not case.others:
        return None
    idx = case.rng.choice(len(case.others), size=2, replace=len(case.others) < 2)
    return case.others[idx[0]], case.others[idx[1]]


def _two_noisy(case: Case):
    return tuple(P.jitter(case.gt, case.rng, TRIANGLE_NOISE_SIGMA) for _ in range(2))


def _two_thinned(case: Case):
    if case.gt.n_edges == 0:
        return None
    return tuple(P.drop_edge_fraction(case.gt, case.rng, TRIANGLE_EDGE_FRACTION) for _ in range(2))


#: (test name, category, test) in report order; names follow the paper's Table 2.
TESTS: list[tuple[str, Category, TestFn]] = [
    ("Monotonic (wrong edges)", Category.MONOTONIC, _monotonic(lambda c: P.wrong_edges_sequence(c.gt, c.rng, STEPS))),
    ("Monotonic (deform/split)", Category.MONOTONIC,
     _monotonic(lambda c: P.deform_sequence(c.gt, c.rng, STEPS, DEFORM_OFFSET))),
    ("Monotonic (moving vertex)", Category.MONOTONIC,
     _monotonic(lambda c: P.moving_sequence(c.gt, c.rng, STEPS, MOVE_DISTANCE))),
    ("Monotonic (disconnect edges)", Category.MONOTONIC,
     _monotonic(lambda c: P.disconnect_sequence(c.gt, c.rng, STEPS, DISCONNECT_GAP))),
    ("Monotonic (delete vertices)", Category.MONOTONIC,
     _monotonic(lambda c: P.delete_vertices_sequence(c.gt, c.rng, STEPS))),
    ("Monotonic (delete edges)", Category.MONOTONIC, _monotonic(lambda c: P.delete_edges_sequence(c.gt, c.rng, STEPS))),
    ("Identity of indiscernibles", Category.IDENTITY, _identity),
    ("Near identity of indiscernibles", Category.IDENTITY, _near_identity),
    ("Symmetry (0 mean, weighted)", Category.SYMMETRY, _symmetry(SYMMETRY_SIGMA, 0.0)),
    ("Near symmetry (0 mean, weighted)", Category.SYMMETRY, _symmetry(NEAR_SCALE * SYMMETRY_SIGMA, 0.0)),
    ("Symmetry (shift, weighted)", Category.SYMMETRY, _symmetry(SYMMETRY_SIGMA, SYMMETRY_SHIFT)),
    ("Near symmetry (shift, weighted)", Category.SYMMETRY,
     _symmetry(NEAR_SCALE * SYMMETRY_SIGMA, NEAR_SCALE * SYMMETRY_SHIFT)),
    ("Quasi-proportionality (shift, far)", Category.QUASI_PROPORTIONALITY, _quasi_proportional(SHIFT_STEP_FAR)),
    ("Quasi-proportionality (shift, close)", Category.QUASI_PROPORTIONALITY, _quasi_proportional(SHIFT_STEP_CLOSE)),
    ("Triangle ineq. (rand other)", Category.TRIANGLE, _triangle(_two_others)),
    ("Triangle ineq. (add noise)", Category.TRIANGLE, _triangle(_two_noisy)),
    ("Triangle ineq. (del1/del2)", Category.TRIANGLE, _triangle(_two_thinned)),
]


def _dissimilarity_fn(names: list[str]) -> Callable[[Wireframe, Wireframe], np.ndarray]:
    metrics = [METRICS[n] for n in names]

    def dissim(pred: Wireframe, gt: Wireframe) -> np.ndarray:
        scores = evaluate_all(pred, gt, names)
        return np.array([m.to_dissimilarity(scores[m.name]) for m in metrics])

    return dissim


def property_cases(
    wireframes: Sequence[Wireframe],
    *,
    seed: int = 0,
    metric_names: Sequence[str] | None = None,
    model_ids: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per (wireframe, test, metric): ``passed`` is True/False, or missing when not applicable.

    Each wireframe is normalised to bounding-box diagonal 1 first, so the tolerances mean the same everywhere.
    """
    names = get_metric_names() if metric_names is None else list(metric_names)
    ids = [str(i) for i in range(len(wireframes))] if model_ids is None else [str(m) for m in model_ids]
    dissim = _dissimilarity_fn(names)
    gts = [P.normalise(w) for w in wireframes]
    rows = []
    for index, gt in enumerate(gts):
        others = gts[:index] + gts[index + 1 :]
        self_d = dissim(gt, gt)
        for test, category, fn in TESTS:
            case = Case(gt, others, derive_rng(seed, "properties", index, test), dissim, self_d)
            outcome = fn(case)
            for k, name in enumerate(names):
                passed = None if outcome is None else bool(outcome[k])
                rows.append((ids[index], index, category.value, test, name, passed))
    frame = pd.DataFrame(rows, columns=["model_id", "model_index", "category", "test", "metric", "passed"])
    frame["passed"] = frame["passed"].astype("boolean")
    return frame


def pass_rates(cases: pd.DataFrame) -> pd.DataFrame:
    """Test x metric table of the fraction of applicable wireframes that pass (NaN if none applies)."""
    tests = [t for t, _, _ in TESTS if t in set(cases["test"])]
    metrics = list(dict.fromkeys(cases["metric"]))
    rates = cases.groupby(["test", "metric"], sort=False)["passed"].mean().astype(float).unstack("metric")
    return rates.reindex(index=tests, columns=metrics)


def run_properties(
    wireframes: Sequence[Wireframe], *, seed: int = 0, metric_names: Sequence[str] | None = None
) -> pd.DataFrame:
    """Test x metric pass rates over ``wireframes`` (see the module docstring for each test)."""
    return pass_rates(property_cases(wireframes, seed=seed, metric_names=metric_names))


def render_markdown(rates: pd.DataFrame, threshold: float = PASS_RATE) -> str:
    """A Table-2-like Markdown table: tests grouped by category, passes (>= threshold) in bold, pass counts."""
    category_of = {t: c for t, c, _ in TESTS}
    metrics = list(rates.columns)
    lines = ["| Test | " + " | ".join(metrics) + " |", "|---|" + "---:|" * len(metrics)]
    current = None
    for test, row in rates.iterrows():
        if category_of.get(test) is not current:
            current = category_of.get(test)
            lines.append(f"| **{current.value if current else 'Other'}** |" + " |" * len(metrics))
        cells = []
        for value in row:
            if pd.isna(value):
                cells.append("n/a")
            else:
                cells.append(f"**{value:.2f}**" if value >= threshold else f"{value:.2f}")
        lines.append(f"| {test} | " + " | ".join(cells) + " |")
    counts = (rates >= threshold).sum(axis=0)
    applicable = rates.notna().sum(axis=0)
    lines.append("| Pass count | " + " | ".join(f"{counts[m]}/{applicable[m]}" for m in metrics) + " |")
    return "\n".join(lines) + "\n"
