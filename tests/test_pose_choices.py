"""isometric_to_pose: one isometric drawing alone must tell nothing of its pose; ``questions.pose_choices``.

The default choices (``upper``: poses 1, 2, 3, 4) make the argument below; ``spare3d`` (1, 2, 5, 6) reproduces the
paper, cue included. The argument has two halves, one test each:

* geometry: the choice poses are one pose turned k quarter turns about +Z, so the drawing from choice k of a
  model is the drawing from choice 0 of the model turned back k quarter turns (drawn, with hidden lines and framing);
* generator: CSG programs are drawn as often as their quarter turns about Z (statistically, on a sample).

Together: the drawing distribution is the same for every choice. SPARE3D's choices 1, 2, 5, 6 fail the first half:
no rotation maps pose 1's camera onto pose 5's, and an axis-aligned model seen from 5 looks upside down.
"""

from __future__ import annotations

import copy
import gzip
import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

from drawings_shapes import L_BLOCK, render_config, write_model
from spare_gen.config import ConfigError, load_config
from spare_gen.config.schema import TaskName
from spare_gen.config.tasks.isometric_to_pose import PoseChoices
from spare_gen.stages.drawings.child import draw_model
from spare_gen.canvas.poses import pose
from spare_gen.stages.models.csg import random_program
from spare_gen.stages.questions.layout import pose_view
from spare_gen.stages.questions.near_duplicate import Drawing, drawing_distance
from spare_gen.stages.questions.tasks import question_settings
from spare_gen.config.tasks.isometric_to_pose import POSE_CHOICE_SETS
from spare_gen.stages.questions.validate import validate
from spare_gen.rng import derive_rng
from tests.conftest import REPO, spare_gen_cli

UPPER = POSE_CHOICE_SETS[PoseChoices.UPPER]


def _rz(quarter_turns: int) -> np.ndarray:
    c, s = np.rint(np.cos(quarter_turns * np.pi / 2)), np.rint(np.sin(quarter_turns * np.pi / 2))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def test_choice_poses_are_quarter_turns_about_z():
    first = pose(pose_view(UPPER[0]))
    for k, choice in enumerate(UPPER):
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
    first = pose_view(UPPER[0])
    turned = {k: _drawings(tmp_path, _turned_boxes(L_BLOCK, -k), f"m{k}")[first] for k in range(4)}
    for k, choice in enumerate(UPPER):
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


def _pose_rows(out) -> list[dict]:
    folder = out / "questions" / TaskName.ISOMETRIC_TO_POSE.value
    return [r for path in sorted(folder.glob("*.parquet")) for r in pq.read_table(path).to_pylist()]


def _summary(out) -> dict:
    return json.loads((out / "questions" / "summary.json").read_text())


def test_the_default_offers_the_four_upper_poses(small_dataset):
    rows = _pose_rows(small_dataset)
    assert rows and all(r["choice_poses"] == [1, 2, 3, 4] for r in rows)
    assert _summary(small_dataset)["pose_choices"] == "upper"


def test_the_choice_is_in_the_fingerprint_of_isometric_to_pose_units_only(tmp_path):
    default, paper = load_config(None, []), load_config(None, ["questions.pose_choices=spare3d"])
    assert default.questions.pose_choices is PoseChoices.UPPER and paper.questions.pose_choices is PoseChoices.SPARE3D
    for task in TaskName:
        same = (question_settings(default, tmp_path, task).fingerprint()
                == question_settings(paper, tmp_path, task).fingerprint())
        assert same is (task is not TaskName.ISOMETRIC_TO_POSE), task


@pytest.fixture(scope="module")
def spare3d_choices(small_dataset, tmp_path_factory):
    """The shared small dataset's question stage rerun with the paper's choices (only isometric_to_pose's units are
    redone: the other tasks' settings do not hold the choice)."""
    out = tmp_path_factory.mktemp("pose_choices") / "spare3d"
    shutil.copytree(small_dataset, out, symlinks=True)
    proc = spare_gen_cli("run", "--config", str(REPO / "configs" / "default.toml"), "--out", str(out),
                         "--no-progress", "--stages", "questions", "--set", "runner.dashboard=false",
                         "--set", "questions.pose_choices=spare3d")
    assert proc.returncode == 0, proc.stderr
    return out


def test_changing_the_choice_redoes_the_isometric_to_pose_units_and_no_others(small_dataset, spare3d_choices):
    def units(root, task: TaskName) -> dict[str, int]:
        folder = root / ".units" / f"questions_{task.value}"
        return {p.name: p.stat().st_mtime_ns for p in folder.glob("*.json.gz")}

    cuts = units(small_dataset, TaskName.THREE_VIEW_TO_ISOMETRIC)
    assert cuts and units(spare3d_choices, TaskName.THREE_VIEW_TO_ISOMETRIC) == cuts  # copied, kept, not rewritten
    folder = spare3d_choices / ".units" / f"questions_{TaskName.ISOMETRIC_TO_POSE.value}"
    results = [json.loads(gzip.decompress(p.read_bytes())) for p in sorted(folder.glob("*.json.gz"))]
    assert results and all(r["choice_poses"] == [1, 2, 5, 6] for r in results)


def test_spare3d_offers_the_papers_poses_and_its_rows_validate(spare3d_choices):
    rows = _pose_rows(spare3d_choices)
    assert rows and all(r["choice_poses"] == [1, 2, 5, 6] for r in rows)
    assert {r["choice_poses"][r["answer"]] for r in rows} == {1, 2, 5, 6}  # balanced answers reach every pose
    assert _summary(spare3d_choices)["pose_choices"] == "spare3d"
    proc = spare_gen_cli("validate", str(spare3d_choices))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_validate_catches_rows_whose_poses_are_not_the_recorded_choice(spare3d_choices, tmp_path):
    out = tmp_path / "relabelled"
    shutil.copytree(spare3d_choices, out, symlinks=True, ignore=shutil.ignore_patterns(".units"))
    summary = _summary(out)
    (out / "questions" / "summary.json").write_text(json.dumps({**summary, "pose_choices": "upper"}))
    problems = validate(out)
    assert problems and all("choice_poses [1, 2, 5, 6] are not [1, 2, 3, 4] (questions.pose_choices = upper)" in p
                            for p in problems), problems[:3]
    assert len(problems) == len(_pose_rows(out))


def test_a_bad_pose_choice_is_one_line_naming_key_and_value(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(None, ["questions.pose_choices=below"])
    message = str(info.value)
    assert "\n" not in message and all(w in message for w in ("questions.pose_choices", "below", "upper, spare3d"))
    out = tmp_path / "run"
    proc = spare_gen_cli("run", "--out", str(out), "--set", "questions.pose_choices=below")
    assert proc.returncode == 2 and not out.exists()
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "questions.pose_choices" in lines[0] and "'below'" in lines[0], proc.stderr
