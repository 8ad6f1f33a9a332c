"""Bradley-Terry abilities by penalised maximum likelihood, their implied win rates and the Elo form.

Model (paper Eq. 5): P(i beats j) = sigmoid(theta_i - theta_j). A tie counts as half a win for each
side, i.e. the paper's binary cross-entropy (Eq. 7) with target y = 0.5. The paper fits theta with
Adam from a random start; the loss is convex, so we minimise it exactly with L-BFGS (analytic
gradient) from zero, which is deterministic. A small L2 penalty ``l2/2 * |theta|^2`` (a Gaussian prior
with sd ``1/sqrt(l2)``) keeps the optimum finite under perfect separation (an item that never lost)
and pins the free offset: at the optimum sum(theta) = 0 exactly.

Elo form (paper Eq. 6, scale s = 400, offset o = 800): Elo = s * theta + o, so that
P(i beats j) = sigmoid((Elo_i - Elo_j) / s). The paper's Table 1 confirms this reading (fitting its 27
rows gives Elo = 400.7 * BT + 797): the offset is the rating level, not a term inside the sigmoid, and
the sigmoid has base e, not chess's base 10 (which would be 400 / ln 10 = 174 points per unit of theta).
The paper fits Elo as a second SGD run, so its two implied win rates differ in the second decimal;
here the Elo fit is the exact reparametrisation, so both give the same probabilities and ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from spare_gen.ranking.winrate import Matchups

DEFAULT_L2 = 1e-2
ELO_SCALE = 400.0
ELO_OFFSET = 800.0
MAX_ITEMS_FOR_STDERR = 3000  # the standard errors invert a dense items x items Hessian


@dataclass(frozen=True)
class BradleyTerryFit:
    """Abilities theta (mean 0) with standard errors (Laplace approximation: inverse Hessian of the penalised loss)."""

    items: tuple[str, ...]
    ability: np.ndarray
    stderr: np.ndarray
    log_likelihood: float
    l2: float


def _loss_and_grad(theta: np.ndarray, m: Matchups, l2: float) -> tuple[float, np.ndarray]:
    d = theta[m.a] - theta[m.b]
    losses = m.score_a * np.logaddexp(0.0, -d) + (m.games - m.score_a) * np.logaddexp(0.0, d)
    g_d = m.games * expit(d) - m.score_a  # d loss / d (theta_a - theta_b)
    grad = np.bincount(m.a, g_d, m.n_items) - np.bincount(m.b, g_d, m.n_items) + l2 * theta
    return float(losses.sum() + 0.5 * l2 * theta @ theta), grad


def _hessian(theta: np.ndarray, m: Matchups, l2: float) -> np.ndarray:
    d = theta[m.a] - theta[m.b]
    h = m.games * expit(d) * expit(-d)
    hess = l2 * np.eye(m.n_items)
    np.add.at(hess, (m.a, m.a), h)
    np.add.at(hess, (m.b, m.b), h)
    np.add.at(hess, (m.a, m.b), -h)
    np.add.at(hess, (m.b, m.a), -h)
    return hess


def fit_bradley_terry(m: Matchups, *, l2: float = DEFAULT_L2) -> BradleyTerryFit:
    """Maximise the Bradley-Terry likelihood of the pooled judgements ``m`` minus ``l2/2 |theta|^2``."""
    if l2 <= 0:
        raise ValueError(f"l2 must be > 0 to keep abilities finite, got {l2!r}")
    theta0 = np.zeros(m.n_items)
    result = minimize(
        _loss_and_grad,
        theta0,
        args=(m, l2),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 10_000, "gtol": 1e-10, "ftol": 1e-15},
    )
    theta = result.x - result.x.mean()  # already ~0 at the optimum; remove round-off
    stderr = np.full(m.n_items, np.nan)
    if m.n_items <= MAX_ITEMS_FOR_STDERR:
        # covariance of the centred abilities: the common offset is set by the prior alone, not the data
        centre = np.eye(m.n_items) - 1.0 / m.n_items
        cov = centre @ np.linalg.inv(_hessian(theta, m, l2)) @ centre
        stderr = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    loss, _ = _loss_and_grad(theta, m, 0.0)
    return BradleyTerryFit(items=m.items, ability=theta, stderr=stderr, log_likelihood=-loss, l2=l2)


def comparison_components(m: Matchups) -> int:
    """How many groups of items are linked by judgements; abilities in different groups are not comparable."""
    graph = coo_matrix((np.ones(len(m.a)), (m.a, m.b)), shape=(m.n_items, m.n_items))
    return int(connected_components(graph, directed=False)[0])


def win_probability(rating_i: np.ndarray | float, rating_j: np.ndarray | float, scale: float = 1.0):
    """P(i beats j) = sigmoid((r_i - r_j) / scale); scale 1 for BT abilities, ELO_SCALE for Elo."""
    return expit((np.asarray(rating_i, float) - np.asarray(rating_j, float)) / scale)


def implied_win_rates(ratings: np.ndarray, m: Matchups, *, scale: float = 1.0) -> np.ndarray:
    """Each item's expected win rate against the opponents it actually met (NaN if it never played).

    At the unpenalised optimum this equals the empirical win rate exactly (the likelihood equations),
    which is why the paper's Table 1 columns agree to two decimals.
    """
    p = win_probability(ratings[m.a], ratings[m.b], scale)
    expected = np.bincount(m.a, m.games * p, m.n_items) + np.bincount(m.b, m.games * (1 - p), m.n_items)
    games = m.item_games()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, expected / games, np.nan)


def elo_scores(ability: np.ndarray, *, scale: float = ELO_SCALE, offset: float = ELO_OFFSET) -> np.ndarray:
    """Elo = scale * theta + offset (paper Eq. 6 with s = 400, o = 800)."""
    return scale * np.asarray(ability, float) + offset
