"""Multiview pose accuracy: TAS, RAS and PAS (Lee & Civera, "Alignment Scores"), and ATE for comparison.

Conventions (both checked and documented once here):

* Rotations default to **camera-to-world** (``RotationConvention.CAMERA_TO_WORLD``): column j of R_i is
  camera i's axis j in world coordinates, and ``t`` is then the camera centre c_i in world coordinates.
  With ``WORLD_TO_CAMERA`` (x_cam = R x_world + t), R is transposed and the centre is c = -R^T t.
* A world similarity x -> s Q x + u maps camera-to-world rotations R -> Q R and centres c -> s Q c + u;
  alignment undoes exactly that, so every score here is invariant to it.
* Errors are in ground-truth units: the estimate is aligned onto the ground truth, never the reverse.

Definitions (n cameras, errors e_i):

* d = upper quartile of the closest-pair distances min_{j != i} |c_i - c_j| of the ground-truth centres
  (the ceil(0.75 n)-th smallest, as ``np.quantile(method="inverted_cdf")`` and the authors' code).
* TAS = (1 / 100) sum_{k=1..100} (fraction of e_i < k d / 100), e_i = |s Q c_est_i + u - c_gt_i| after a
  robust similarity alignment (modified PCR-99, see ``robust_similarity_alignment``).
* RAS = (1 / 100) sum_{k=1..100} (fraction of angle((A R_gt_i)^T R_est_i) < k / 10 degrees), A = robust
  rotation average of R_est_i R_gt_i^T (truncated-chordal inlier selection, then geodesic L1 median).
* PAS = (TAS + RAS) / 2.
* ATE = sqrt(mean_i |s Q c_est_i + u - c_gt_i|^2) after the least-squares (Umeyama) similarity fit on all
  cameras.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation

from spare_gen.rng import derive_rng

N_THRESHOLDS = 100  # thresholds 0.01 d .. d and 0.1 .. 10 degrees, both at 1 % resolution
ROTATION_THRESHOLD_STEP_DEG = 0.1
SCALE_CONSISTENCY = 0.1  # max |log-ratio difference| of a triplet's three pair distances (PCR-99)
N_HYPOTHESES = 1000  # accepted 3-point hypotheses per robust alignment
MAX_DRAWS_PER_HYPOTHESIS = 50  # give up on the scale pre-filter after this many draws per wanted hypothesis
CHORDAL_INLIER = 0.5  # Frobenius distance (about 20.4 degrees) for rotation-averaging inliers
WEISZFELD_MAX_ITERATIONS = 100
WEISZFELD_TOLERANCE_RAD = 1e-9
_EVAL_BUDGET = 2_000_000  # hypotheses x cameras evaluated at once (memory bound)
_GRAM_ROWS = 1024  # rows of the n x n chordal-distance matrix built at once


class RotationConvention(str, Enum):
    """What the given rotations map: camera frame to world frame, or world frame to camera frame."""

    CAMERA_TO_WORLD = "camera_to_world"
    WORLD_TO_CAMERA = "world_to_camera"


@dataclass(frozen=True)
class Similarity:
    """x -> scale * rotation @ x + translation."""

    scale: float
    rotation: np.ndarray  # (3, 3)
    translation: np.ndarray  # (3,)

    def apply(self, points: np.ndarray) -> np.ndarray:
        return self.scale * points @ self.rotation.T + self.translation


def _as_rotations(rotations) -> np.ndarray:
    r = np.asarray(rotations, dtype=np.float64)
    if r.ndim != 3 or r.shape[1:] != (3, 3):
        raise ValueError(f"rotations must have shape (N, 3, 3), got {r.shape}")
    return r


def _as_points(points, n: int | None = None) -> np.ndarray:
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3 or (n is not None and len(p) != n):
        raise ValueError(f"points must have shape ({n if n is not None else 'N'}, 3), got {p.shape}")
    if not np.isfinite(p).all():
        raise ValueError("points contain NaN or inf")
    return p


def camera_to_world(rotations, translations, convention=RotationConvention.CAMERA_TO_WORLD):
    """(camera-to-world rotations (N,3,3), camera centres (N,3)) from poses in either convention."""
    convention = RotationConvention(convention)
    r = _as_rotations(rotations)
    t = _as_points(translations, len(r))
    if convention is RotationConvention.CAMERA_TO_WORLD:
        return r, t
    r_c2w = np.transpose(r, (0, 2, 1))
    return r_c2w, -np.einsum("nij,nj->ni", r_c2w, t)


def translation_threshold(centres_gt) -> float:
    """d: upper quartile of each ground-truth camera's distance to its closest other camera."""
    c = _as_points(centres_gt)
    if len(c) < 2:
        raise ValueError(f"need at least 2 cameras for closest-pair distances, got {len(c)}")
    nearest, _ = cKDTree(c).query(c, k=2)
    d = float(np.quantile(nearest[:, 1], 0.75, method="inverted_cdf"))
    if d <= 0:
        raise ValueError(f"upper quartile of closest-pair distances is {d}; most ground-truth centres coincide")
    return d


def umeyama(source, target) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares similarity target ~ s R source + t (Umeyama 1991), batched over leading axes.

    ``source``/``target`` are (..., k, 3); returns scale (...), rotation (..., 3, 3), translation (..., 3).
    """
    src, dst = np.asarray(source, dtype=np.float64), np.asarray(target, dtype=np.float64)
    mu_s, mu_d = src.mean(axis=-2), dst.mean(axis=-2)
    xs, xd = src - mu_s[..., None, :], dst - mu_d[..., None, :]
    var_s = np.mean(np.sum(xs**2, axis=-1), axis=-1)
    cov = np.einsum("...ki,...kj->...ij", xd, xs) / src.shape[-2]
    u, sig, vt = np.linalg.svd(cov)
    signs = np.ones(sig.shape)
    signs[..., 2] = np.sign(np.linalg.det(u) * np.linalg.det(vt))  # forbid reflections
    rotation = u @ (signs[..., :, None] * vt)
    scale = np.sum(sig * signs, axis=-1) / np.where(var_s > 0, var_s, np.inf)  # coincident sources: scale 0
    translation = mu_d - scale[..., None] * np.einsum("...ij,...j->...i", rotation, mu_s)
    return scale, rotation, translation


def _distinct_triplets(rng: np.random.Generator, n: int, count: int) -> np.ndarray:
    """(count, 3) uniformly random index triplets with three different indices each."""
    i = rng.integers(0, n, count)
    j = rng.integers(0, n - 1, count)
    j = j + (j >= i)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    k = rng.integers(0, n - 2, count)
    k = k + (k >= lo)
    k = k + (k >= hi)
    return np.stack([i, j, k], axis=1)


def _scale_consistent(triplets: np.ndarray, est: np.ndarray, gt: np.ndarray, tolerance: float) -> np.ndarray:
    """PCR-99 pre-filter: the three pair-distance log-ratios est/gt of a triplet agree within ``tolerance``."""
    pairs = [(0, 1), (1, 2), (2, 0)]
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.stack(
            [
                np.log(np.linalg.norm(est[triplets[:, a]] - est[triplets[:, b]], axis=1))
                - np.log(np.linalg.norm(gt[triplets[:, a]] - gt[triplets[:, b]], axis=1))
                for a, b in pairs
            ],
            axis=1,
        )
    finite = np.isfinite(logs).all(axis=1)
    spread = np.max(logs, axis=1) - np.min(logs, axis=1)
    return finite & (np.where(finite, spread, np.inf) <= tolerance)


def _sample_hypotheses(est, gt, rng, n_hypotheses: int, tolerance: float) -> np.ndarray:
    """Triplets passing the scale pre-filter, drawn until ``n_hypotheses`` pass or the draw budget ends."""
    n = len(est)
    kept: list[np.ndarray] = []
    n_kept = 0
    max_draws = MAX_DRAWS_PER_HYPOTHESIS * n_hypotheses
    drawn = 0
    batch = max(256, 2 * n_hypotheses)
    while n_kept < n_hypotheses and drawn < max_draws:
        triplets = _distinct_triplets(rng, n, batch)
        drawn += batch
        ok = triplets[_scale_consistent(triplets, est, gt, tolerance)]
        kept.append(ok)
        n_kept += len(ok)
    accepted = np.concatenate(kept)[:n_hypotheses]
    if len(accepted) == 0:  # no triplet agrees on scale: fall back to unfiltered non-degenerate triplets
        triplets = _distinct_triplets(rng, n, n_hypotheses)
        accepted = triplets[_scale_consistent(triplets, est, gt, np.inf)]
    if len(accepted) == 0:
        raise ValueError("every sampled triplet has coincident cameras; cannot fit a similarity")
    return accepted


def robust_similarity_alignment(
    centres_est, centres_gt, rng: np.random.Generator, *, n_hypotheses: int = N_HYPOTHESES,
    scale_consistency: float = SCALE_CONSISTENCY,
) -> Similarity:
    """Similarity mapping estimated centres onto ground truth, robust to outliers (modified PCR-99).

    Hypotheses are exact Umeyama fits to random camera triplets whose three pair-distance ratios agree
    on the scale (|log-ratio differences| <= ``scale_consistency``); the winner minimises the m-th
    smallest alignment error, m = max(4, round(0.1 n)) (at most n), like the authors' code. There is no
    refinement on the inliers: the score is defined by the best minimal fit, as in the paper.
    """
    gt = _as_points(centres_gt)
    est = _as_points(centres_est, len(gt))
    n = len(gt)
    if n < 3:
        raise ValueError(f"need at least 3 cameras for a similarity alignment, got {n}")
    m = min(n, max(4, int(np.floor(0.1 * n + 0.5))))
    triplets = _sample_hypotheses(est, gt, rng, n_hypotheses, scale_consistency)
    best_err, best = np.inf, None
    step = max(1, _EVAL_BUDGET // n)
    for start in range(0, len(triplets), step):
        tri = triplets[start : start + step]
        s, r, t = umeyama(est[tri], gt[tri])
        moved = s[:, None, None] * np.einsum("hij,nj->hni", r, est) + t[:, None, :]
        errors = np.linalg.norm(moved - gt[None], axis=2)
        mth = np.partition(errors, m - 1, axis=1)[:, m - 1]
        h = int(np.argmin(mth))  # first minimum: deterministic given the draws
        if mth[h] < best_err:
            best_err, best = mth[h], Similarity(float(s[h]), r[h], t[h])
    return best


def translation_errors(centres_est, centres_gt, rng: np.random.Generator, **alignment_options) -> np.ndarray:
    """Distance of each robustly aligned estimated centre to its ground truth, in ground-truth units."""
    gt = _as_points(centres_gt)
    est = _as_points(centres_est, len(gt))
    return np.linalg.norm(robust_similarity_alignment(est, gt, rng, **alignment_options).apply(est) - gt, axis=1)


def cumulative_frequencies(errors, thresholds) -> np.ndarray:
    """Fraction of errors strictly below each threshold."""
    e = np.sort(np.asarray(errors, dtype=np.float64))
    return np.searchsorted(e, np.asarray(thresholds, dtype=np.float64), side="left") / len(e)


def translation_thresholds(d: float) -> np.ndarray:
    """0.01 d, 0.02 d, ..., d."""
    return np.arange(1, N_THRESHOLDS + 1) / N_THRESHOLDS * d


def rotation_thresholds_deg() -> np.ndarray:
    """0.1, 0.2, ..., 10 degrees."""
    return np.arange(1, N_THRESHOLDS + 1) * ROTATION_THRESHOLD_STEP_DEG


def _chordal_init(samples: np.ndarray) -> np.ndarray:
    """Indices of the samples within ``CHORDAL_INLIER`` of the sample with least truncated chordal cost."""
    v = samples.reshape(len(samples), 9)
    best_cost, best_row = np.inf, None
    for start in range(0, len(v), _GRAM_ROWS):
        # |A - B|_F^2 = 6 - 2 <A, B> for rotations
        dist = np.sqrt(np.clip(6.0 - 2.0 * v[start : start + _GRAM_ROWS] @ v.T, 0.0, None))
        cost = np.minimum(dist, CHORDAL_INLIER).sum(axis=1)
        i = int(np.argmin(cost))
        if cost[i] < best_cost:
            best_cost, best_row = cost[i], dist[i]
    return np.flatnonzero(best_row < CHORDAL_INLIER)


def robust_rotation_average(samples) -> np.ndarray:
    """Robust average of rotations: truncated-chordal inliers, chordal mean, then geodesic L1 (Weiszfeld).

    Iterates to convergence (the authors stop after 10 steps or 1e-3 rad; we go to 1e-9 rad so the
    result does not depend on the stopping rule).
    """
    r = _as_rotations(samples)
    inliers = Rotation.from_matrix(r[_chordal_init(r)])
    u, _, vt = np.linalg.svd(inliers.as_matrix().sum(axis=0))
    fix = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))])
    current = Rotation.from_matrix(u @ fix @ vt)
    for _ in range(WEISZFELD_MAX_ITERATIONS):
        residual = (inliers * current.inv()).as_rotvec()
        angles = np.linalg.norm(residual, axis=1)
        away = angles > 1e-12  # a sample at the current estimate has no direction: skip it (modified Weiszfeld)
        if not away.any():
            break
        step = (residual[away] / angles[away, None]).sum(axis=0) / np.sum(1.0 / angles[away])
        current = Rotation.from_rotvec(step) * current
        if np.linalg.norm(step) < WEISZFELD_TOLERANCE_RAD:
            break
    return current.as_matrix()


def rotation_errors_deg(rotations_est, rotations_gt) -> np.ndarray:
    """Angle (degrees) between each estimated camera-to-world rotation and the robustly aligned ground truth."""
    gt = _as_rotations(rotations_gt)
    est = _as_rotations(rotations_est)
    if len(est) != len(gt):
        raise ValueError(f"{len(est)} estimated rotations for {len(gt)} ground-truth rotations")
    align = robust_rotation_average(est @ np.transpose(gt, (0, 2, 1)))
    diff = Rotation.from_matrix(align @ gt).inv() * Rotation.from_matrix(est)
    return np.degrees(diff.magnitude())


def translation_alignment_score(centres_est, centres_gt, rng: np.random.Generator, **alignment_options) -> float:
    """TAS: mean cumulative frequency of aligned centre errors over thresholds 0.01 d .. d."""
    errors = translation_errors(centres_est, centres_gt, rng, **alignment_options)
    return float(cumulative_frequencies(errors, translation_thresholds(translation_threshold(centres_gt))).mean())


def rotation_alignment_score(rotations_est, rotations_gt) -> float:
    """RAS: mean cumulative frequency of aligned rotation errors over 0.1 .. 10 degrees (camera-to-world)."""
    errors = rotation_errors_deg(rotations_est, rotations_gt)
    return float(cumulative_frequencies(errors, rotation_thresholds_deg()).mean())


def pose_alignment_score(
    R_est, t_est, R_gt, t_gt, rng: np.random.Generator, *, convention=RotationConvention.CAMERA_TO_WORLD
) -> float:
    """PAS = (TAS + RAS) / 2."""
    r_est, c_est = camera_to_world(R_est, t_est, convention)
    r_gt, c_gt = camera_to_world(R_gt, t_gt, convention)
    tas = translation_alignment_score(c_est, c_gt, rng)
    return (tas + rotation_alignment_score(r_est, r_gt)) / 2.0


def absolute_trajectory_error(centres_est, centres_gt) -> float:
    """ATE: RMS centre error after the least-squares similarity fit of the estimate onto the ground truth."""
    gt = _as_points(centres_gt)
    est = _as_points(centres_est, len(gt))
    s, r, t = umeyama(est, gt)
    return float(np.sqrt(np.mean(np.sum((Similarity(float(s), r, t).apply(est) - gt) ** 2, axis=1))))


def pose_report(
    R_est, t_est, R_gt, t_gt, seed: int = 0, *, convention=RotationConvention.CAMERA_TO_WORLD,
    rng: np.random.Generator | None = None,
) -> dict:
    """TAS, RAS, PAS and ATE of estimated poses against the ground truth, plus their ingredients.

    Randomness (the robust alignment's triplets) comes from ``rng`` if given, else
    ``derive_rng(seed, "pose_report", "robust_alignment")``. Keys: tas, ras, pas, ate, d,
    translation_errors, rotation_errors_deg, translation_thresholds, rotation_thresholds_deg,
    tas_curve, ras_curve (cumulative frequency per threshold).
    """
    r_est, c_est = camera_to_world(R_est, t_est, convention)
    r_gt, c_gt = camera_to_world(R_gt, t_gt, convention)
    if len(r_est) != len(r_gt):
        raise ValueError(f"{len(r_est)} estimated poses for {len(r_gt)} ground-truth poses")
    rng = rng if rng is not None else derive_rng(seed, "pose_report", "robust_alignment")
    d = translation_threshold(c_gt)
    t_thr, r_thr = translation_thresholds(d), rotation_thresholds_deg()
    t_err = translation_errors(c_est, c_gt, rng)
    r_err = rotation_errors_deg(r_est, r_gt)
    tas_curve, ras_curve = cumulative_frequencies(t_err, t_thr), cumulative_frequencies(r_err, r_thr)
    tas, ras = float(tas_curve.mean()), float(ras_curve.mean())
    return {
        "tas": tas,
        "ras": ras,
        "pas": (tas + ras) / 2.0,
        "ate": absolute_trajectory_error(c_est, c_gt),
        "d": d,
        "translation_errors": t_err,
        "rotation_errors_deg": r_err,
        "translation_thresholds": t_thr,
        "rotation_thresholds_deg": r_thr,
        "tas_curve": tas_curve,
        "ras_curve": ras_curve,
    }
