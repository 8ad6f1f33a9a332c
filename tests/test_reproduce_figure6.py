"""pipelines/reproduce_spare3d_figure6.py on a tiny dataset: trains the chosen cells, writes table, chart, JSON."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

from spare_gen.baseline.figure6 import ARCH_COLOURS  # noqa: E402
from spare_gen.baseline.options import Arch  # noqa: E402
from tests.conftest import REPO  # noqa: E402

SCRIPT = REPO / "pipelines" / "reproduce_spare3d_figure6.py"


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True, timeout=900)


def test_the_figure6_pipeline_trains_tiny_cells_and_writes_table_and_chart(tmp_path):
    from synthetic_dataset import make_dataset

    data = make_dataset(tmp_path / "data", split_sizes={"train": 4, "val": 2, "test": 4})
    dest = tmp_path / "fig"
    done = _script("--dataset", str(data), "--dest", str(dest), "--cells", "isometric_to_pose",
                   "pose_to_isometric:binary", "--archs", "bagnet33", "--size", "36", "--epochs", "1",
                   "--batch-size", "4", "--device", "cpu")
    assert done.returncode == 0, done.stderr[-3000:]
    records = json.loads((dest / "figure6.json").read_text())
    rows = [r for r in records if r["kind"] == "network"]
    people = [r for r in records if r["kind"] == "people"]  # no one answered: the paper's people alone
    assert [(r["task"], r["protocol"], r["test"], r["paper"]["accuracy"]) for r in people] == [
        ("isometric_to_pose", "untrained", None, 0.602), ("isometric_to_pose", "trained", None, 0.91),
        ("pose_to_isometric", "untrained", None, 0.586), ("pose_to_isometric", "trained", None, 0.65)]
    assert [r["cell"] for r in rows] == ["isometric_to_pose/multiclass/bagnet33",
                                         "pose_to_isometric/binary/bagnet33",
                                         "isometric_to_pose/multiclass/bagnet33/blank-views"]
    assert [r["paper_test"] for r in rows] == [71.9, 26.5, None]
    assert rows[0]["paper"]["total"] == 500 and rows[0]["paper"]["ci"][0] < 0.719 < rows[0]["paper"]["ci"][1]
    assert all(r["test"]["total"] == 4 and r["device"] == "cpu" and r["samples_per_second"] > 0 for r in rows)
    assert "paper None" not in done.stdout and "(paper 71.9 %)" in done.stdout
    assert ("isometric_to_pose-multiclass-bagnet33-blank: test " in done.stdout and "(no paper cell: compare with "
            "isometric_to_pose-multiclass-bagnet33 and chance 25 %)" in done.stdout)
    table = (dest / "figure6.md").read_text()
    assert "| Isometric to Pose | multiclass | BagNet-33 | blank |" in table and "71.9 % [67.8, 75.7], n 500" in table
    assert "| Isometric to Pose | - | people, untrained | F, R, T | - | not measured | - | 60.2 % [" in table
    assert table.split("| Isometric to Pose")[1] in done.stdout  # printed as written
    for run in ("isometric_to_pose-multiclass-bagnet33", "isometric_to_pose-multiclass-bagnet33-blank"):
        assert (dest / run / "history.json").is_file()
        assert all((dest / run / f"curve{suffix}").stat().st_size > 0 for suffix in (".png", ".svg", ".pdf"))
    assert (dest / "figure6.svg").read_text().startswith("<?xml") and (dest / "figure6.pdf").read_bytes()[:5] == b"%PDF-"
    with Image.open(dest / "figure6.png") as im:
        assert im.mode == "RGB" and im.size[0] > im.size[1] > 400
        pixels = np.asarray(im).reshape(-1, 3)
    colour = np.array([int(ARCH_COLOURS[Arch.BAGNET33][i:i + 2], 16) for i in (1, 3, 5)])
    assert (np.abs(pixels - colour).sum(axis=1) == 0).sum() > 500  # BagNet's bars are drawn


def test_without_a_dataset_a_missing_config_is_one_line_exit_2(tmp_path):
    done = _script("--config", str(tmp_path / "none.toml"), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"reproduce_spare3d_figure6.py: {tmp_path / 'none.toml'}: no such config (pass --config, or --dataset "
        f"for existing data)"]


def test_without_torch_the_script_says_so_in_one_line_and_exits_2(python_without_torch, tmp_path):
    from tests.conftest import without_torch_env

    done = subprocess.run([str(python_without_torch), str(SCRIPT), "--dataset", str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, env=without_torch_env())
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["reproduce_spare3d_figure6.py: needs the optional dependency 'torch': "
                                        'pip install -e ".[torch]" (in the repository)']


def test_a_sigint_ends_the_script_with_one_line_and_exit_130_even_when_started_with_sigint_ignored(tmp_path):
    from synthetic_dataset import make_dataset

    data = make_dataset(tmp_path / "data", split_sizes={"train": 4, "val": 2, "test": 2})
    ignoring = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731 (as `cmd &` in a script starts it)
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--dataset", str(data), "--dest", str(tmp_path / "fig"),
                             "--cells", "isometric_to_pose", "--archs", "resnet50", "--no-blank", "--size", "36",
                             "--epochs", "1000", "--batch-size", "2", "--device", "cpu"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ignoring)
    try:
        first = proc.stdout.readline()  # the first epoch's line: training is under way
        assert ": epoch 1/1000: " in first, proc.stderr.read() if proc.poll() is not None else first
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err.splitlines() == ["reproduce_spare3d_figure6.py: interrupted"], err


def test_a_figure6_run_with_simulated_people_puts_them_beside_the_networks_in_table_json_and_chart(quiz_dataset,
                                                                                                    tmp_path):
    import shutil

    from tests.conftest import spare_gen_cli
    from spare_gen.baseline.figure6 import PEOPLE_COLOURS

    out = tmp_path / "out"
    shutil.copytree(quiz_dataset, out)
    simulated = spare_gen_cli("quiz", str(out), "--simulate", "6", "--accuracy", "0.7", "--questions", "1",
                              timeout=300)
    assert simulated.returncode == 0, simulated.stderr
    scored = spare_gen_cli("evaluate", str(out), str(out / "quiz"), timeout=300)
    assert scored.returncode == 0, scored.stderr
    humans = json.loads((out / "reports" / "humans.json").read_text())
    ours = next(r for r in humans["results"] if r["task"] == "isometric_to_pose" and r["phase"] == "test")["pooled"]
    done = _script("--dataset", str(out), "--cells", "isometric_to_pose", "--archs", "bagnet33", "--no-blank",
                   "--size", "36", "--epochs", "1", "--batch-size", "4", "--questions", "4", "--device", "cpu")
    assert done.returncode == 0, done.stderr[-3000:]
    dest = out / "figure6"
    records = json.loads((dest / "figure6.json").read_text())
    assert [(r["kind"], r["cell"]) for r in records] == [
        ("network", "isometric_to_pose/multiclass/bagnet33"), ("people", "people/untrained/isometric_to_pose"),
        ("people", "people/trained/isometric_to_pose")]
    untrained = records[1]
    assert untrained["test"]["total"] == ours["total"] == 6 and untrained["people"] == 6
    assert untrained["test"]["ci"] == ours["ci"] and untrained["paper"]["total"] == 400
    table = (dest / "figure6.md").read_text()
    lines = [line for line in table.splitlines() if line.startswith("| Isometric to Pose")]
    assert len(lines) == 3 and "| BagNet-33 |" in lines[0] and "people, untrained (6 people" in lines[1]
    assert "| 6 | 60.2 % [55.3, 64.9], n 400" in lines[1] and "not measured" in lines[2]  # nobody trained
    card = (out / "README.md").read_text()
    assert "people, untrained (6 people" in card  # the card: the same table, written by evaluate
    with Image.open(dest / "figure6.png") as im:
        pixels = np.asarray(im).reshape(-1, 3)
    colour = np.array([int(PEOPLE_COLOURS["untrained"][i:i + 2], 16) for i in (1, 3, 5)])
    assert (np.abs(pixels - colour).sum(axis=1) == 0).sum() > 500  # this dataset's people are drawn
    svg = (dest / "figure6.svg").read_text()
    assert "this dataset's people, Isometric to Pose: untrained 6 answers of 6 people" in svg
