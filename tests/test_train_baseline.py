"""train-baseline: a few epochs on the default dataset lower the loss, and evaluate accepts its predictions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

from spare_gen.baseline.curve import HEIGHT, WIDTH  # noqa: E402
from spare_gen.baseline.train import CURVE_NAME, HISTORY_NAME, PREDICTIONS_NAME, WEIGHTS_NAME  # noqa: E402
from spare_gen.data.tables import load_split  # noqa: E402
from tests.conftest import spare_gen_cli  # noqa: E402


def linked_copy(small_dataset: Path, dest: Path) -> Path:
    """The dataset's question tables and drawings under a new root, so reports land there, not in the shared one."""
    dest.mkdir()
    for name in ("questions", "drawings"):
        (dest / name).symlink_to(small_dataset / name)
    return dest


@pytest.mark.parametrize("task, epochs", [("isometric_to_pose", 6), ("three_view_to_isometric", 4)])
def test_baseline_loss_falls_and_evaluate_accepts_predictions(small_dataset, tmp_path, task, epochs):
    out = linked_copy(small_dataset, tmp_path / "out")
    dest = tmp_path / "baseline"
    r = spare_gen_cli("train-baseline", str(out), "--task", task, "--epochs", str(epochs), "--size", "32",
                      "--dest", str(dest), timeout=900)
    assert r.returncode == 0, r.stderr
    assert f"train {task} small: " in r.stderr and "loss=" in r.stderr  # progress: plain lines in a pipe
    assert {CURVE_NAME, HISTORY_NAME, PREDICTIONS_NAME, WEIGHTS_NAME} <= {p.name for p in dest.iterdir()}
    history = json.loads((dest / HISTORY_NAME).read_text())
    assert len(history["epoch_loss"]) == epochs and history["n"]["train"] > 0
    assert history["epoch_loss"][-1] < 0.9 * history["epoch_loss"][0], history["epoch_loss"]
    assert history["train_accuracy"][-1] > history["train_accuracy"][0]
    with Image.open(dest / CURVE_NAME) as im:
        assert im.size == (WIDTH, HEIGHT) and im.mode == "RGB"
    assert (dest / "curve.svg").read_text().startswith("<?xml") and (dest / "curve.pdf").read_bytes()[:5] == b"%PDF-"
    lines = (dest / PREDICTIONS_NAME).read_text().splitlines()
    ids = [r["question_id"] for r in load_split(out, task, "test", columns=["question_id"]).to_pylist()]
    assert lines[0] == "question_id,answer" and [line.split(",")[0] for line in lines[1:]] == ids
    ev = spare_gen_cli("evaluate", str(out), str(dest / PREDICTIONS_NAME), "--task", task)
    assert ev.returncode == 0, ev.stderr
    report = json.loads((out / "reports" / f"evaluate_{task}_test.json").read_text())
    assert report["overall"] == history["test"]["overall"] and report["n_questions"] == len(ids)


def test_generation_task_or_bad_option_is_one_line_exit_2(small_dataset, tmp_path):
    for args, message in [(("--task", "point_cloud_generation"), "is a generation task"),
                          (("--task", "isometric_to_pose", "--channels", "hsv"), "unknown channel order 'hsv'"),
                          (("--task", "isometric_to_pose", "--epochs", "0"), "--epochs must be at least 1"),
                          (("--task", "isometric_to_pose", "--device", "banana"), "unknown device 'banana'")]:
        r = spare_gen_cli("train-baseline", str(small_dataset), *args, "--dest", str(tmp_path / "x"))
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0] and "Traceback" not in r.stderr
    assert not (tmp_path / "x").exists()


def test_after_its_first_steps_a_run_says_what_a_step_an_epoch_and_the_run_take_and_lists_every_curve_file(tmp_path):
    from spare_gen.baseline.train import ESTIMATE_AFTER
    from synthetic_dataset import make_dataset

    out = make_dataset(tmp_path / "out", split_sizes={"train": 2 * (1 + ESTIMATE_AFTER), "val": 2, "test": 2})
    r = spare_gen_cli("train-baseline", str(out), "--task", "isometric_to_pose", "--epochs", "2", "--size", "16",
                      "--batch-size", "2", "--dest", str(tmp_path / "b"), timeout=600)
    assert r.returncode == 0, r.stderr
    [estimate] = [line for line in r.stderr.splitlines() if " a step: " in line]
    assert estimate.startswith("spare-gen: train isometric_to_pose small: about ")
    assert f"an epoch ({1 + ESTIMATE_AFTER} steps) about " in estimate and f"all {2 * (1 + ESTIMATE_AFTER)} steps" in estimate
    assert "curve.png (and its .svg and .pdf)" in r.stdout.splitlines()[-1]
