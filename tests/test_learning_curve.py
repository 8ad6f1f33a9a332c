"""--arch hypotheses and `spare-gen learning-curve`: the re-arranged views are exactly the turned model's, blank
views are blank, and a curve trains and scores on held-out questions whose models are not in training."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spare_gen.baseline.pose_hypotheses import face_warps, gather_index, hypotheses
from spare_gen.canvas.poses import THREE_VIEWS, pose
from spare_gen.config.tasks.isometric_to_pose import POSE_CHOICE_SETS, PoseChoices

UPPER, PAPER = POSE_CHOICE_SETS[PoseChoices.UPPER], POSE_CHOICE_SETS[PoseChoices.SPARE3D]


@pytest.mark.parametrize("choices", [UPPER, PAPER, (1, 1, 2, 3, 4, 5, 6, 7, 8), (2,)])
def test_each_choice_is_the_canonical_pose_of_the_turned_model_and_its_views_are_fs_rs_and_ts(choices):
    points = np.random.default_rng(0).normal(size=(50, 3))
    for h in hypotheses(choices):
        g, t = np.asarray(h.g), np.asarray(h.t)
        turned = points @ g.T  # g M
        # the drawing of pose k of M is t applied to the drawing of the canonical pose of g M
        assert np.allclose(pose(str(h.pose)).project(points), pose(str(h.canonical)).project(turned) @ t.T)
        for view, source in zip(THREE_VIEWS, h.views):  # g M's F, R, T are M's F, R or T turned or mirrored
            a = np.asarray(source.a)
            assert np.allclose(pose(view).project(turned), pose(THREE_VIEWS[source.source]).project(points) @ a.T)
    upper = hypotheses(UPPER)
    assert all(np.allclose(h.t, np.eye(2)) and np.isclose(np.linalg.det(h.g), 1) and h.g[2] == (0, 0, 1)
               for h in upper)  # quarter turns about +Z; the drawing itself is never turned
    assert [np.allclose(h.t, -np.eye(2)) for h in hypotheses(PAPER)] == [False, False, True, True]  # 5, 6: below


def test_the_pixel_maps_are_exact_permutations_of_the_grid():
    for h in hypotheses(PAPER):
        for source in h.views:
            index = gather_index(source.a, 9)
            assert sorted(index.tolist()) == list(range(81))
    assert [w.sign for w in face_warps(1)] == [1.0, -1.0, 1.0]  # pose 1 sees the front, the left and the top


torch = pytest.importorskip("torch")  # the rest trains: the optional `torch` extra, which CI installs

from spare_gen.baseline.pose_net import CandidateHypotheses, PoseHypotheses, ink  # noqa: E402
from tests.conftest import spare_gen_cli  # noqa: E402


def _batch(seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    white = torch.ones(2, 3, 200, 200)
    drawing, views = white.clone(), torch.ones(2, 9, 200, 200)
    for image in (drawing[:, :], views[:, 0:3], views[:, 3:6], views[:, 6:9]):
        r = torch.randint(20, 180, (4,), generator=g).tolist()
        image[:, :, min(r[0], r[1]):max(r[0], r[1]) + 2, min(r[2], r[3]):max(r[2], r[3]) + 2] = 0.0  # black ink
    return {"drawing": drawing, "views": views}


def test_blank_views_give_every_upper_choice_the_same_input_and_the_same_score():
    torch.manual_seed(0)
    batch = _batch()
    net = PoseHypotheses(UPPER).eval()
    stacks = net.stacks(batch)
    assert stacks[:, :, 2:].abs().sum() > 0  # drawn views reach the scorer, differently per choice
    assert not torch.equal(stacks[:, 0], stacks[:, 1])
    blank = {"drawing": batch["drawing"], "views": torch.ones_like(batch["views"])}  # Resident's blank paper
    stacks = net.stacks(blank)
    assert stacks[:, :, 2:].abs().sum() == 0  # no ink of any view reaches the scorer
    logits = net(blank)
    assert torch.equal(logits, logits[:, :1].expand_as(logits))  # ties: chance by construction
    paper = PoseHypotheses(PAPER).eval()(blank)  # poses 5, 6 turn the drawing: the twin can tell them apart
    assert not torch.equal(paper[:, 0], paper[:, 2])


def test_candidate_hypotheses_stack_each_candidate_with_the_views_of_its_questions_pose_and_blank_views_are_blank():
    batch = _batch()
    candidates = torch.stack([_batch(seed)["drawing"] for seed in range(1, 5)], 1)  # (2, 4, 3, H, W)
    pose = torch.zeros(2, 8)
    pose[0, 0], pose[1, 5] = 1.0, 1.0  # pose 1 and pose 6 (seen from below)
    batch = {"views": batch["views"], "candidates": candidates, "pose": pose}
    net = CandidateHypotheses().eval()
    stacks = net.stacks(batch)
    assert stacks.shape == (2, 4, 5, 64, 64)
    assert torch.equal(stacks[:, 0, 2:], stacks[:, 3, 2:]) and stacks[:, :, 2:].abs().sum() > 0  # one set of views
    assert not torch.equal(stacks[:, 0, :2], stacks[:, 1, :2])  # the candidates differ
    assert torch.equal(stacks[0, :, :2], ink(candidates[0], 64))  # pose 1 is the canonical pose: not turned
    assert torch.equal(stacks[1, :, :2], ink(candidates[1], 64).flip(-1).flip(-2))  # pose 6: turned a half turn
    assert not torch.equal(stacks[0, 0, 2:], net.stacks({**batch, "pose": pose.flip(0)})[0, 0, 2:])  # per pose
    blank = {**batch, "views": torch.ones_like(batch["views"])}
    assert net.stacks(blank)[:, :, 2:].abs().sum() == 0
    fixed = CandidateHypotheses(2).eval().stacks({"views": batch["views"], "candidates": candidates})
    assert torch.equal(fixed[:, :, :2], ink(candidates.flatten(0, 1), 64).view(2, 4, 2, 64, 64))


def _copy_questions(small_dataset: Path, dest: Path) -> Path:
    dest.mkdir()
    shutil.copytree(small_dataset / "questions", dest / "questions")
    (dest / "drawings").symlink_to(small_dataset / "drawings")
    shutil.copy(small_dataset / "dataset.json", dest / "dataset.json")
    return dest


def _models(out: Path, split: str) -> list[str]:
    from spare_gen.data.tables import load_split

    return [r["model_id"] for r in load_split(out, "isometric_to_pose", split, ["model_id"]).to_pylist()]


def test_a_learning_curve_trains_the_recipe_and_scores_held_out_models_only(small_dataset, tmp_path):
    out = _copy_questions(small_dataset, tmp_path / "out")
    dest = tmp_path / "curve"
    r = spare_gen_cli("learning-curve", str(out), "--task", "isometric_to_pose", "--arch", "hypotheses",
                      "--sizes", "8", "16", "--epochs", "2", "--dest", str(dest), "--no-progress",
                      "--record", str(tmp_path / "record.json"), timeout=900)
    assert r.returncode == 0, r.stderr
    train, held = _models(out, "train"), _models(out, "val") + _models(out, "test")
    assert not set(train) & set(held)  # the split the curve relies on: no model on both sides
    result = json.loads((dest / "learning_curve.json").read_text())
    assert result == json.loads((tmp_path / "record.json").read_text())
    assert result["models_disjoint"] == "checked" and result["held_out"] == "val+test"
    assert [p["n_train"] for p in result["points"]] == [8, 16]
    for p in result["points"]:
        for learner in ("network", "blank", "probe_views", "probe_blind"):
            assert p[learner]["total"] == len(held) and 0 <= p[learner]["accuracy"] <= 1
        assert p["network"]["epochs"] == 2 and p["network"]["cpu_seconds"] > 0
        lo, hi = p["network_minus_blank"]["ci95"]
        assert lo <= p["network_minus_blank"]["mean"] <= hi
    assert result["choice_poses"] == list(UPPER) and result["options"]["arch"] == "hypotheses"
    blank_run = json.loads((dest / "hypotheses-blank-n8" / "history.json").read_text())
    assert blank_run["options"]["blank_views"] is True
    assert "| 8 |" in (dest / "learning_curve.md").read_text()
    with Image.open(dest / "learning_curve.png") as im:
        assert im.mode == "RGB" and im.size[0] > 600
    assert (dest / "learning_curve.svg").read_text().startswith("<?xml")
    # a rerun (or a curve stopped and started again) reuses every finished run whose options and questions match
    again = spare_gen_cli("learning-curve", str(out), "--task", "isometric_to_pose", "--arch", "hypotheses",
                          "--sizes", "8", "16", "--epochs", "2", "--dest", str(dest), "--no-progress", timeout=900)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("reused: trained earlier in") == 4  # 2 sizes x (network, blank)
    rerun = json.loads((dest / "learning_curve.json").read_text())
    assert [{k: p[k] for k in ("network", "blank", "network_minus_blank")} for p in rerun["points"]] == \
        [{k: p[k] for k in ("network", "blank", "network_minus_blank")} for p in result["points"]]
    other = spare_gen_cli("learning-curve", str(out), "--task", "isometric_to_pose", "--arch", "hypotheses",
                          "--sizes", "8", "--epochs", "1", "--dest", str(dest), "--no-progress", "--no-probe",
                          timeout=900)  # another recipe: trained again
    assert other.returncode == 0 and "reused" not in other.stdout, other.stderr


def test_a_model_on_both_sides_is_refused_in_one_line(small_dataset, tmp_path):
    import pyarrow.parquet as pq

    from spare_gen.stages.questions.schema import split_path

    out = _copy_questions(small_dataset, tmp_path / "out")
    val = split_path(out, "isometric_to_pose", "val")
    table = pq.read_table(val)
    leaked = _models(out, "train")[0]
    column = table.schema.get_field_index("model_id")
    val.unlink()
    pq.write_table(table.set_column(column, "model_id", [[leaked] * table.num_rows]), val)
    r = spare_gen_cli("learning-curve", str(out), "--task", "isometric_to_pose", "--arch", "hypotheses",
                      "--sizes", "8", "--epochs", "1", "--dest", str(tmp_path / "curve"), "--no-progress")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "in train and in val/test" in lines[0] and leaked in lines[0]
    assert not (tmp_path / "curve").exists()


def test_hypotheses_trains_the_candidate_tasks_and_refuses_another_formulation_in_one_line(small_dataset, tmp_path):
    for task in ("three_view_to_isometric", "pose_to_isometric"):
        r = spare_gen_cli("train-baseline", str(small_dataset), "--task", task, "--arch", "hypotheses", "--epochs",
                          "1", "--dest", str(tmp_path / task), "--no-progress", timeout=900)
        assert r.returncode == 0, r.stderr
        history = json.loads((tmp_path / task / "history.json").read_text())
        assert history["options"]["formulation"] == "multiclass" and history["options"]["arch"] == "hypotheses"
    r = spare_gen_cli("train-baseline", str(small_dataset), "--task", "pose_to_isometric", "--arch", "hypotheses",
                      "--formulation", "binary", "--dest", str(tmp_path / "x"))
    assert r.returncode == 2 and "multiclass" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
