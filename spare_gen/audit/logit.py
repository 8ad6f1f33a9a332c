"""Conditional logistic regression: one shared linear score per choice, softmax over a question's choices.

Scoring each candidate with the same weights and picking the argmax is exactly what a question-blind
shortcut can do, and the softmax makes only differences between a question's candidates matter
("the answer is the one with the most ink"). A multinomial classifier over 4 classes is the special
case where choice k's features are the drawing's features in block k (``class_design``). Fitted by
nonlinear conjugate gradients on the mean negative log-likelihood plus an L2 penalty; the penalty is
chosen by k-fold cross-validated log-loss on the training questions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax

L2_GRID = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
CV_FOLDS = 5
# Nonlinear CG: same optimum as L-BFGS-B here, 10-50x faster at d ~ 1000 (scipy 1.17's L-BFGS-B spends
# about 1 ms per step in its own bookkeeping).
METHOD = "CG"


def class_design(x: np.ndarray, n_classes: int) -> np.ndarray:
    """(n, d) features to (n, n_classes, n_classes * d): block k holds x for choice k, the rest is 0.

    No per-class intercept: answer frequencies are the ``answer_position`` probe's business, and with
    exactly balanced answers an intercept only learns the held-out fold's deficit.
    """
    n, d = x.shape
    out = np.zeros((n, n_classes, n_classes * d))
    for k in range(n_classes):
        out[:, k, k * d:(k + 1) * d] = x
    return out


@dataclass(frozen=True)
class Standardizer:
    """Per-feature mean and scale of the training choices (constant features get scale 1)."""

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray) -> "Standardizer":
        flat = x.reshape(-1, x.shape[-1])
        scale = flat.std(axis=0)
        return cls(flat.mean(axis=0), np.where(scale > 1e-12, scale, 1.0))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.scale


def _loss(w: np.ndarray, x: np.ndarray, y: np.ndarray, l2: float) -> tuple[float, np.ndarray]:
    logp = log_softmax(x @ w, axis=1)
    n = len(y)
    p = np.exp(logp)
    p[np.arange(n), y] -= 1.0
    grad = np.einsum("nk,nkd->d", p, x) / n + l2 * w
    return float(-logp[np.arange(n), y].mean() + 0.5 * l2 * w @ w), grad


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Weights (d,) of the conditional logit on choices ``x`` (n, k, d) with answers ``y`` (n,)."""
    res = minimize(_loss, np.zeros(x.shape[-1]), args=(x, np.asarray(y), float(l2)), jac=True, method=METHOD)
    return res.x


def predict(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The highest-scoring choice per question (the first one on ties)."""
    return np.argmax(x @ w, axis=1)


def log_loss(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    return float(-log_softmax(x @ w, axis=1)[np.arange(len(y)), y].mean())


def stratified_folds(y: np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold index per question, each answer spread evenly over the folds (sizes differ by at most one).

    Plain random folds of exactly balanced answers anti-correlate a fold with the rest: the answer most
    frequent in training is the rarest held out, so a majority guess scores below chance.
    """
    fold = np.empty(len(y), dtype=np.int64)
    offset = 0
    for label in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == label))
        fold[idx] = (np.arange(len(idx)) + offset) % folds
        offset += len(idx)
    return fold


def choose_l2(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, grid=L2_GRID, folds: int = CV_FOLDS) -> float:
    """The L2 penalty of ``grid`` with the lowest k-fold cross-validated log-loss (ties: the larger penalty)."""
    n = len(y)
    k = min(folds, n)
    fold = stratified_folds(y, k, rng)
    losses = []
    for l2 in grid:
        total = 0.0
        for f in range(k):
            train, test = fold != f, fold == f
            total += log_loss(x[test], y[test], fit(x[train], y[train], l2)) * test.sum()
        losses.append(total / n)
    best = min(losses)
    return max(l2 for l2, loss in zip(grid, losses) if loss <= best + 1e-12)
