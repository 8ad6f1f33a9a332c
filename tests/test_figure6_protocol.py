"""--protocol spare3d changes exactly what it says (the R slot where SPARE3D's glob picks answer.png; the best epoch's
test accuracy reported), the quick CPU configuration of the Figure 6 pipeline finishes, and a Ctrl-C is one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from synthetic_dataset import make_dataset

torch = pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

from spare_gen.baseline.figure6 import cell_of  # noqa: E402
from spare_gen.baseline.options import Arch, Protocol, TrainOptions  # noqa: E402
from spare_gen.baseline.train import R_SLOT, load_splits, spare3d_glob_swaps, train  # noqa: E402
from spare_gen.config.schema import TaskName  # noqa: E402
from spare_gen.data.tables import load_split  # noqa: E402
from tests.conftest import REPO  # noqa: E402

SCRIPT = REPO / "pipelines" / "reproduce_spare3d_figure6.py"
I2P = TaskName.ISOMETRIC_TO_POSE
# the documented quick configuration (docs/guide/reproducing-spare3d.md), on the test's small dataset
QUICK = ("--cells", "all", "--archs", "bagnet33", "--size", "36", "--epochs", "1", "--questions", "4",
         "--batch-size", "4", "--device", "cpu")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A dataset whose R views and isometric drawings are all distinct drawings (random lines per view)."""
    return make_dataset(tmp_path_factory.mktemp("planted") / "out", split_sizes={"train": 24, "val": 8, "test": 16})


def test_the_spare3d_protocol_puts_the_isometric_drawing_in_r_exactly_where_the_glob_would(planted):
    base = TrainOptions(arch=Arch.SMALL, size=16, device="cpu").resolved(I2P)
    clean = load_splits(planted, I2P, base, torch.device("cpu"))
    theirs = load_splits(planted, I2P, TrainOptions(arch=Arch.SMALL, size=16, device="cpu",
                                                    protocol=Protocol.SPARE3D).resolved(I2P), torch.device("cpu"))
    n_swapped = 0
    for split in ("train", "val", "test"):
        a, b = clean[split].tensors, theirs[split].tensors
        swaps = spare3d_glob_swaps(clean[split].ids)
        assert theirs[split].swapped == swaps and clean[split].swapped == [False] * len(swaps)
        for i, swapped in enumerate(swaps):
            assert torch.equal(b["views"][i, R_SLOT], a["drawing"][i] if swapped else a["views"][i, R_SLOT])
        assert torch.equal(b["views"][:, :3], a["views"][:, :3]) and torch.equal(b["views"][:, 6:], a["views"][:, 6:])
        for key in ("drawing", "answer"):
            assert torch.equal(a[key], b[key])
        assert not torch.equal(a["views"][:, R_SLOT], a["drawing"])  # planted: R and the drawing differ
        n_swapped += sum(swaps)
    assert 0.25 < n_swapped / 48 < 0.75  # a coin per folder, "about half"
    assert spare3d_glob_swaps(clean["test"].ids) == theirs["test"].swapped  # the same folders on every run
    # a task without an extra drawing has nothing to swap
    t3 = load_splits(planted, TaskName.THREE_VIEW_TO_ISOMETRIC, TrainOptions(
        arch=Arch.SMALL, size=16, device="cpu", protocol=Protocol.SPARE3D).resolved(TaskName.THREE_VIEW_TO_ISOMETRIC),
        torch.device("cpu"))
    assert not any(t3["train"].swapped)


def test_the_spare3d_protocol_reports_the_best_epochs_test_accuracy_and_the_default_the_best_val_epochs(
        planted, tmp_path):
    histories = {}
    for protocol in Protocol:
        options = TrainOptions(arch=Arch.SMALL, size=16, epochs=6, device="cpu", protocol=protocol)
        histories[protocol] = train(planted, I2P, options, dest=tmp_path / protocol.value, progress=False)
    ours, theirs = histories[Protocol.SPARE_GEN], histories[Protocol.SPARE3D]
    n_test = ours["n"]["test"]
    mine = cell_of(ours)
    assert mine.epoch == ours["best_epoch"] and mine.test.correct == ours["test"]["overall"]["correct"]
    assert ours["best_epoch"] == 1 + max(range(6), key=lambda i: (ours["val_accuracy"][i], -i))
    cell = cell_of(theirs)
    tests = theirs["test_accuracy"]
    assert cell.epoch == 1 + max(range(len(tests)), key=lambda i: (tests[i], -i))
    assert cell.test.correct == round(max(tests) * n_test) and cell.test.total == n_test
    assert cell.train.correct == round(theirs["train_accuracy"][cell.epoch - 1] * theirs["n"]["train"])
    assert cell.label.endswith("/spare3d-protocol") and not mine.label.endswith("protocol")
    ids = [r["question_id"] for r in load_split(planted, I2P, "test", columns=["question_id"]).to_pylist()]
    assert theirs["spare3d_glob_swaps"]["test"] == sum(spare3d_glob_swaps(ids)) > 0
    assert ours["spare3d_glob_swaps"] == {"train": 0, "val": 0, "test": 0}


def _pipeline(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(SCRIPT), *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"), **kw)


def test_the_quick_configuration_trains_every_cell_with_a_line_per_epoch(planted, tmp_path):
    started = time.monotonic()
    proc = _pipeline("--dataset", str(planted), "--dest", str(tmp_path / "fig"), *QUICK)
    out, err = proc.communicate(timeout=3000)
    assert proc.returncode == 0, err[-3000:]
    rows = [r for r in json.loads((tmp_path / "fig" / "figure6.json").read_text()) if r["kind"] == "network"]
    assert len(rows) == 6  # BagNet-33's five Figure 6 cells and isometric-to-pose with the views blank
    assert all(r["n"] == {"train": 4, "val": 4, "test": 4} and len(r["per_epoch"]["test"]) == 1 for r in rows)
    epoch_lines = [line for line in out.splitlines() if ": epoch " in line]
    assert len(epoch_lines) == 6 and "loss" in epoch_lines[0] and "val" in epoch_lines[0]
    print(f"quick Figure 6: {time.monotonic() - started:.0f} s wall")


def test_a_ctrl_c_while_a_cell_trains_is_one_line_and_exit_130(planted, tmp_path):
    proc = _pipeline("--dataset", str(planted), "--dest", str(tmp_path / "fig"), "--cells", "isometric_to_pose",
                     "--archs", "bagnet33", "--size", "36", "--epochs", "2000", "--questions", "4", "--batch-size", "4",
                     "--device", "cpu")  # far more epochs than a loaded machine runs before the signal lands
    for line in proc.stdout:  # wait for training to be under way
        if ": epoch 1/2000" in line:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["reproduce_spare3d_figure6.py: interrupted"]
