"""isometric_to_pose: one isometric drawing alone must tell nothing of its pose.

The argument has two halves, one test each:

* geometry: the choice poses are one pose turned k quarter turns about +Z, so the drawing from choice k of a
  model is the drawing from choice 0 of the model turned back k quarter turns (drawn, with hidden lines and framing);
* generator: CSG programs are drawn as often as their quarter turns about Z (statistically, on a sample).

Together: the drawing distribution is the same for every choice. SPARE3D's choices 1, 2, 5, 6 fail the first half:
no rotation maps pose 1's camera onto pose 5's, and an axis-aligned model seen from 5 looks upside down.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy import stats

from drawings_shapes import L_BLOCK, render_config, write_model
from spare_gen.drawings.child import draw_model
from spare_gen.drawings.poses import pose
from spare_gen.models.csg import random_program
from spare_gen.questions.layout import POSE_CHOICES, pose_view
from spare_gen.questions.near_duplicate import Drawing, drawing_distance
from spare_gen.rng import derive_rng


def _rz(quarter_turns: int) -> np.ndarray:
    c, s = np.rint(np.cos(quarter_turns * np.pi / 2)), np.rint(np.sin(quarter_turns * np.pi / 2))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def test_choice_poses_are_quarter_turns_about_z():
    first = pose(pose_view(POSE_CHOICES[0]))
    for k, choice in enumerate(POSE_CHOICES):
        p = pose(pose_view(choice))
        np.testing.assert_allclose(_rz(k) @ first.direction, p.direction, atol=1e-12)
        np.testing.assert_allclose(_rz(k) @ first.x_direction, p.x_direction, atol=1e-12)


def _turned_boxes(program: dict, quarter_turns: int) -> dict:
    """A box-only program turned ``quarter_turns`` quarter turns about +Z (about the origin)."""
    out = copy.deepcopy(program)
    r = _rz(quarter_turns)
    for p in out["primitives"]:
        assert p["type"] == "box" and "rotation" not in p
        if quarter_turns % 2:
            p["params"]["dx"], p["params"]["dy"] = p["params"]["dy"], p["params"]["dx"]
        p["translation"] = [float(v) for v in r @ np.asarray(p["translation"], dtype=float)]
    return out


def _drawings(tmp_path, program: dict, name: str) -> dict[str, Drawing]:
    result = draw_model(name, write_model(program, tmp_path, name), str(tmp_path), render_config(), None, "exact")
    return {r["view"]: Drawing.from_view(r) for r in result["views"]}


def test_each_choice_draws_a_quarter_turned_model_as_the_first_choice_does(tmp_path):
    """L_BLOCK has no symmetry: any match below is the quarter-turn relation, not a coincidence."""
    model = _drawings(tmp_path, L_BLOCK, "m")
    first = pose_view(POSE_CHOICES[0])
    turned = {k: _drawings(tmp_path, _turned_boxes(L_BLOCK, -k), f"m{k}")[first] for k in range(4)}
    for k, choice in enumerate(POSE_CHOICES):
        assert drawing_distance(model[pose_view(choice)], turned[k]) < 0.05
    # the cue the choice avoids: seen from below (pose 5), the model matches no turn of it seen from pose 1
    assert min(drawing_distance(model["5"], d) for d in turned.values()) > 1.5


def _world(spec: dict) -> tuple[np.ndarray, np.ndarray]:
    """(R, t): a primitive's placement as a rotation matrix and a translation."""
    axis = {"x": 0, "y": 1, "z": 2}[spec["rotation"]["axis"]]
    a = np.radians(spec["rotation"]["degrees"])
    c, s = np.rint(np.cos(a)), np.rint(np.sin(a))
    i, j = (axis + 1) % 3, (axis + 2) % 3  # right-handed: the rotation turns axis i towards axis j
    r = np.eye(3)
    r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
    return r, np.asarray(spec["translation"], dtype=float)


@pytest.fixture(scope="module")
def placements() -> dict[str, list]:
    """Per primitive type, (R, t, params) of every primitive of 3,000 seeded programs of 2 to 4 primitives."""
    out: dict[str, list] = {}
    for i in range(3000):
        for spec in random_program(2 + i % 3, derive_rng(0, "test_pose_choices", i))["primitives"]:
            out.setdefault(spec["type"], []).append((*_world(spec), spec["params"]))
    return out


def test_csg_programs_are_drawn_as_often_as_their_quarter_turns(placements):
    # axis of each rotationally symmetric primitive (cone: towards its narrow end) among +X, +Y, -X, -Y: a quarter
    # turn cycles the four, so they must be equally frequent (cylinder, torus: X and Y)
    for kind in ("cone", "cylinder", "torus"):
        axes = np.array([r[:, 2] for r, _, _ in placements[kind]])
        if kind == "cone":
            counts = [int(np.sum(axes[:, a] == sign)) for a in (0, 1) for sign in (1, -1)]
        else:
            counts = [int(np.sum(axes[:, a] != 0)) for a in (0, 1)]
        assert min(counts) > 100 and stats.chisquare(counts).pvalue > 1e-4, (kind, counts)
    # box extents along X and along Y: a quarter turn swaps them
    extents = np.array([np.abs(r) @ [p["dx"], p["dy"], p["dz"]] for r, _, p in placements["box"]])
    assert stats.ks_2samp(extents[:, 0], extents[:, 1]).pvalue > 1e-4
    # translations: a quarter turn maps (x, y) to (-y, x)
    t = np.array([t for kind in placements for _, t, _ in placements[kind]])
    for a, b in ((t[:, 0], -t[:, 1]), (t[:, 1], t[:, 0])):
        assert stats.ks_2samp(a, b).pvalue > 1e-4
