"""TAS / RAS / PAS (alignment scores) and ATE on poses with known errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spare_gen.metrics.pose import (
    RotationConvention,
    absolute_trajectory_error,
    camera_to_world,
    cumulative_frequencies,
    pose_alignment_score,
    pose_report,
    robust_rotation_average,
    rotation_alignment_score,
    translation_alignment_score,
    translation_threshold,
)
from spare_gen.rng import derive_rng

# Closest-pair distances 1, 1, 2, 3, sqrt(54): the ceil(0.75 * 5) = 4th smallest is d = 3.
FIVE_CENTRES = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0], [0, 0, 3], [5, 5, 5]], dtype=float)


def random_scene(n: int, key: str):
    rng = derive_rng(7, "pose-test", key)
    centres = rng.uniform(-10, 10, (n, 3))
    rotations = Rotation.random(n, random_state=rng).as_matrix()
    return rng, rotations, centres


def similarity_of(rng, rotations, centres, scale=3.7):
    """Same poses in another world frame: x -> scale Q x + u (camera-to-world R -> Q R)."""
    q = Rotation.random(random_state=rng).as_matrix()
    u = rng.normal(0, 50, 3)
    return q @ rotations, scale * centres @ q.T + u, q


def test_translation_threshold_is_upper_quartile_of_closest_pairs():
    assert translation_threshold(FIVE_CENTRES) == pytest.approx(3.0)
    # on a line at 0, 1, 3, 7: closest pairs 1, 1, 2, 4; the ceil(0.75 * 4) = 3rd smallest is 2 (no interpolation)
    line = np.array([[0, 0, 0], [1, 0, 0], [3, 0, 0], [7, 0, 0]], dtype=float)
    assert translation_threshold(line) == pytest.approx(2.0)


def test_cumulative_frequency_counts_errors_strictly_below_threshold():
    np.testing.assert_allclose(cumulative_frequencies([0.0, 1.0, 2.0], [1.0, 2.0, 3.0]), [1 / 3, 2 / 3, 1.0])


def test_identical_poses_score_one():
    _, rotations, centres = random_scene(50, "identical")
    r = pose_report(rotations, centres, rotations, centres)
    assert r["tas"] == r["ras"] == r["pas"] == 1.0
    assert r["ate"] < 1e-12


def test_global_similarity_leaves_scores_at_one():
    rng, rotations, centres = random_scene(80, "similarity")
    r_est, c_est, _ = similarity_of(rng, rotations, centres)
    r = pose_report(r_est, c_est, rotations, centres, seed=3)
    assert r["tas"] == r["ras"] == r["pas"] == 1.0
    assert r["ate"] < 1e-9
    assert r["translation_errors"].max() < 1e-9 and r["rotation_errors_deg"].max() < 1e-5


def test_world_to_camera_convention_gives_same_scores():
    rng, rotations, centres = random_scene(40, "convention")
    r_est, c_est, _ = similarity_of(rng, rotations, centres)
    c_est = c_est + rng.normal(0, 0.3, c_est.shape)
    r_est = (Rotation.from_rotvec(rng.normal(0, 0.03, (40, 3))) * Rotation.from_matrix(r_est)).as_matrix()

    def world_to_camera(r_c2w, c):
        r_w2c = np.transpose(r_c2w, (0, 2, 1))
        return r_w2c, -np.einsum("nij,nj->ni", r_w2c, c)

    c2w = pose_report(r_est, c_est, rotations, centres, seed=1)
    w2c = pose_report(*world_to_camera(r_est, c_est), *world_to_camera(rotations, centres), seed=1,
                      convention=RotationConvention.WORLD_TO_CAMERA)
    back_r, back_c = camera_to_world(*world_to_camera(r_est, c_est), "world_to_camera")
    np.testing.assert_allclose(back_c, c_est, atol=1e-9)
    np.testing.assert_allclose(back_r, r_est, atol=1e-12)
    for key in ("tas", "ras", "pas", "ate"):
        assert w2c[key] == pytest.approx(c2w[key], abs=1e-9), key
    assert 0.0 < c2w["tas"] < 1.0 and 0.0 < c2w["ras"] < 1.0


def test_tas_by_hand_with_one_displaced_camera():
    rng = derive_rng(0, "tas-hand")
    moved = FIVE_CENTRES.copy()
    moved[4] += [0.0, 0.0, 1.0]  # error 1.0 in ground-truth units once the other four are aligned
    _, est, _ = similarity_of(rng, np.tile(np.eye(3), (5, 1, 1)), moved, scale=0.25)
    # d = 3, thresholds 0.03 k: four errors 0 pass all 100; error 1.0 passes k = 34..100 (67)
    tas = translation_alignment_score(est, FIVE_CENTRES, derive_rng(0, "tas-hand", "align"))
    assert tas == pytest.approx((4 * 100 + 67) / 500)


def test_ras_by_hand_with_two_rotated_cameras():
    rng, rotations, _ = random_scene(10, "ras-hand")
    axes = rng.normal(size=(2, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    tilt = Rotation.from_rotvec(np.radians([[3.05], [7.05]]) * axes)  # left perturbation: error = angle
    est = Rotation.from_matrix(rotations).as_matrix()
    est[[2, 5]] = (tilt * Rotation.from_matrix(rotations[[2, 5]])).as_matrix()
    est = Rotation.random(random_state=rng).as_matrix() @ est  # unknown world rotation
    # thresholds 0.1 k: eight exact cameras pass 100; 3.05 deg passes k = 31..100 (70); 7.05 deg k = 71..100 (30)
    assert rotation_alignment_score(est, rotations) == pytest.approx((8 * 100 + 70 + 30) / 1000)


def test_ras_ignores_gross_rotation_outliers():
    rng, rotations, _ = random_scene(50, "rotation-outliers")
    est = Rotation.random(random_state=rng).as_matrix() @ rotations
    est[:10] = Rotation.random(10, random_state=rng).as_matrix()  # 20 % arbitrary rotations
    r = rotation_alignment_score(est, rotations)
    # the 40 exact cameras pass every threshold; a random rotation is within 10 degrees with odds ~1e-4
    assert r == pytest.approx(0.8)


def test_rotation_noise_lowers_ras_only_below_its_size():
    rng, rotations, centres = random_scene(60, "rotation-noise")
    angle = np.radians(2.0)
    axes = rng.normal(size=(30, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    noise = Rotation.from_rotvec(np.concatenate([axes, -axes]) * angle)  # +-pairs: the robust mean is exact
    r_est, c_est, _ = similarity_of(rng, (noise * Rotation.from_matrix(rotations)).as_matrix(), centres)
    r = pose_report(r_est, c_est, rotations, centres)
    np.testing.assert_allclose(r["rotation_errors_deg"], 2.0, atol=1e-6)
    thresholds = r["rotation_thresholds_deg"]
    assert np.all(r["ras_curve"][thresholds < 1.95] == 0.0)
    assert np.all(r["ras_curve"][thresholds > 2.05] == 1.0)
    # 80 of the 100 thresholds (2.1 .. 10) lie above 2 degrees; 2.0 itself is a tie either way
    assert 0.80 <= r["ras"] <= 0.81
    assert r["tas"] == 1.0  # translations untouched: the scores are decoupled


def test_outliers_hurt_ate_far_more_than_tas():
    rng, rotations, centres = random_scene(100, "outliers")
    d = translation_threshold(centres)
    noisy = centres + rng.normal(0, 0.005 * d, centres.shape)
    with_outliers = noisy.copy()
    with_outliers[:10] += rng.normal(0, 100 * d, (10, 3))  # 10 % of cameras thrown far away
    clean = pose_report(rotations, noisy, rotations, centres)
    dirty = pose_report(rotations, with_outliers, rotations, centres)
    assert clean["tas"] >= 0.97
    # the 10 outliers can pass no threshold (TAS <= 0.9) but the 90 inliers keep nearly all of theirs
    assert 0.85 <= dirty["tas"] <= 0.9
    assert dirty["ate"] > 10 * clean["ate"]
    assert dirty["ras"] == clean["ras"] == 1.0


def test_ate_by_hand_on_saddle_deformation():
    eps = 0.1
    gt = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]], dtype=float)
    est = gt + np.array([[0, 0, eps], [0, 0, eps], [0, 0, -eps], [0, 0, -eps]])
    # the deformation is orthogonal to every similarity: R = I, t = 0, s = 1 / (1 + eps^2);
    # residual^2 = (s - 1)^2 + s^2 eps^2 = eps^2 / (1 + eps^2)
    expected = eps / np.sqrt(1 + eps**2)
    assert absolute_trajectory_error(est, gt) == pytest.approx(expected)
    _, moved, _ = similarity_of(derive_rng(0, "saddle"), np.tile(np.eye(3), (4, 1, 1)), est, scale=0.02)
    assert absolute_trajectory_error(moved, gt) == pytest.approx(expected)


def test_tas_ignores_rotations_and_ras_ignores_translations():
    rng, rotations, centres = random_scene(30, "decoupled")
    shuffled = rotations[rng.permutation(30)]
    r = pose_report(shuffled, centres, rotations, centres)
    assert r["tas"] == 1.0 and r["ras"] < 0.2
    assert r["pas"] == pytest.approx((r["tas"] + r["ras"]) / 2)
    pas = pose_alignment_score(shuffled, centres, rotations, centres, derive_rng(0, "pas"))
    assert pas == pytest.approx(r["pas"])


def test_same_seed_same_report_and_robust_average_of_identical_rotations():
    rng, rotations, centres = random_scene(40, "seeded")
    noisy = centres + rng.normal(0, 0.5, centres.shape)
    a = pose_report(rotations, noisy, rotations, centres, seed=11)
    b = pose_report(rotations, noisy, rotations, centres, seed=11)
    np.testing.assert_array_equal(a["translation_errors"], b["translation_errors"])
    q = Rotation.random(random_state=rng).as_matrix()
    np.testing.assert_allclose(robust_rotation_average(np.tile(q, (5, 1, 1))), q, atol=1e-12)


def test_too_few_cameras_raise():
    with pytest.raises(ValueError, match="at least 3"):
        translation_alignment_score(FIVE_CENTRES[:2], FIVE_CENTRES[:2], derive_rng(0, "few"))
    with pytest.raises(ValueError, match="shape"):
        pose_report(np.eye(3), FIVE_CENTRES, np.eye(3), FIVE_CENTRES)
