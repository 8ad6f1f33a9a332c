"""The charts (training curve, Figure 6, ranking): matplotlib figures with honest axes and the data's intervals,
written as PNG, SVG and PDF, the same bytes from the same data in any process."""

from __future__ import annotations

import io
import math
import subprocess
import sys

import hashlib
import os

import matplotlib
import matplotlib.container
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection
from PIL import Image

from spare_gen import figures
from spare_gen.baseline.curve import HEIGHT, WIDTH, curve_figure, curve_files
from spare_gen.baseline.figure6 import CHANCE, Cell, chart_figure, chart_files
from spare_gen.baseline.options import Arch, Formulation, recipe
from spare_gen.config.schema import TaskName
from spare_gen.data.human import human_reference
from spare_gen.data.stats import wilson
from spare_gen.ranking import rank_items, ranking_figure, ranking_files, simulate_judgements, win_rate_interval
from tests.conftest import REPO

EPOCH_STEPS = [17 * (e + 1) for e in range(6)]
# loss from ln 4 down: the old chart ticked such an axis 0.39 / 0.79 / 1.18 / 1.57
STEP_LOSS = [1.5 * math.exp(-i / 60) + 0.05 * math.sin(i) for i in range(EPOCH_STEPS[-1])]
TRAIN, VAL, TEST = [0.3, 0.45, 0.6, 0.7, 0.8, 0.9], [0.27, 0.28, 0.3, 0.29, 0.31, 0.3], [0.27, 0.28, 0.3, 0.29, 0.31, 0.3]


def _curve():
    return curve_figure(STEP_LOSS, EPOCH_STEPS, TRAIN, VAL, 0.25, "isometric_to_pose, multiclass", TEST)


def _round(ticks) -> bool:
    """Evenly spaced ticks whose step is 1, 2, 2.5 or 5 times a power of ten, each a multiple of the step."""
    ticks = np.asarray(ticks, dtype=float)
    steps = np.diff(ticks)
    step = steps[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    return (np.allclose(steps, step) and any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5))
            and np.allclose(ticks / step, np.round(ticks / step)))


def _visible(ax, axis: str) -> np.ndarray:
    lo, hi = sorted(ax.get_ylim() if axis == "y" else ax.get_xlim())
    ticks = ax.get_yticks() if axis == "y" else ax.get_xticks()
    return np.asarray([t for t in ticks if lo - 1e-9 <= t <= hi + 1e-9])


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_the_training_curve_has_round_ticks_chance_on_the_accuracy_axis_and_val_apart_from_test():
    fig = _curve()
    loss_ax, acc_ax = fig.axes
    for ax in (loss_ax, acc_ax):
        for axis in "xy":
            assert _round(_visible(ax, axis)), (ax.get_title(), axis, _visible(ax, axis))
    assert loss_ax.get_ylim()[0] == 0 and max(_visible(loss_ax, "y")) >= 1.5
    assert acc_ax.get_ylim() == (0, 1)
    # chance: a line and its label on the accuracy panel, none on the loss panel
    assert any(list(line.get_ydata()) == [0.25, 0.25] for line in acc_ax.get_lines())
    assert any(t.startswith("chance") for t in _texts(acc_ax)) and not any("chance" in t for t in _texts(loss_ax))
    # val and test carry the same numbers here: their lines differ in line style and marker, and the legend names both
    lines = {line.get_label().split()[0]: line for line in acc_ax.get_lines() if not line.get_label().startswith("_")}
    assert set(lines) == {"train", "val", "test"}
    assert list(lines["val"].get_ydata()) == VAL and list(lines["test"].get_ydata()) == TEST
    styles = {k: (line.get_linestyle(), line.get_marker(), line.get_color()) for k, line in lines.items()}
    for a, b in (("val", "test"), ("train", "val"), ("train", "test")):
        assert all(x != y for x, y in zip(styles[a], styles[b])), (a, b, styles)
    legend = [t.get_text() for t in acc_ax.get_legend().get_texts()]
    assert legend == ["train (last 0.900)", "val (last 0.300)", "test (last 0.300)"]
    assert acc_ax.get_xlabel() == "epoch" and loss_ax.get_xlabel().startswith("training step")


def test_a_curve_after_one_epoch_still_shows_its_points_and_nan_accuracies_are_left_out():
    fig = curve_figure(STEP_LOSS[:5], [5], [0.25], [float("nan")], 0.25, "one epoch", [0.5])
    acc_ax = fig.axes[1]
    labels = [line.get_label() for line in acc_ax.get_lines() if not line.get_label().startswith("_")]
    assert labels == ["train (last 0.250)", "test (last 0.500)"]
    assert list(_visible(acc_ax, "x")) == [1.0]  # one integer tick, epoch 1


def test_every_chart_is_written_as_png_svg_and_pdf_with_the_same_bytes_in_any_process():
    files = curve_files(STEP_LOSS, EPOCH_STEPS, TRAIN, VAL, 0.25, "isometric_to_pose, multiclass", TEST)
    assert list(files) == [".png", ".svg", ".pdf"]
    with Image.open(io.BytesIO(files[".png"])) as im:
        assert im.size == (WIDTH, HEIGHT) and im.mode == "RGB"
    svg = files[".svg"].decode()
    assert svg.startswith("<?xml") and "<dc:date>" not in svg and matplotlib.__version__ not in svg
    assert files[".pdf"].startswith(b"%PDF-") and b"CreationDate" not in files[".pdf"]
    assert matplotlib.__version__.encode() not in files[".pdf"] + files[".png"]
    assert curve_files(STEP_LOSS, EPOCH_STEPS, TRAIN, VAL, 0.25, "isometric_to_pose, multiclass", TEST) == files
    # a fresh interpreter with another hash seed draws the same bytes
    code = ("import sys, hashlib; from tests.test_figures import *; "
            "f = curve_files(STEP_LOSS, EPOCH_STEPS, TRAIN, VAL, 0.25, 'isometric_to_pose, multiclass', TEST); "
            "print(' '.join(hashlib.sha256(f[s]).hexdigest() for s in ('.png', '.svg', '.pdf')), "
            "'matplotlib.pyplot' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [hashlib.sha256(files[s]).hexdigest() for s in (".png", ".svg", ".pdf")] + ["False"]


def test_drawing_a_chart_leaves_the_callers_matplotlib_settings_alone():
    before = dict(matplotlib.rcParams)
    _curve()
    figures.render(_curve(), ".svg")
    assert dict(matplotlib.rcParams) == before
    with pytest.raises(ValueError, match="figure format '.jpg'"):
        figures.render(_curve(), ".jpg")


def _cell(task, formulation, arch, blank, correct, total) -> Cell:
    paper = None if blank else recipe(task, formulation, arch).paper_test
    return Cell(task, formulation, arch, blank, wilson(0, 0), wilson(correct, total), paper, 100.0, "cpu", 1, 200)


FIG6_CELLS = [
    _cell(TaskName.ISOMETRIC_TO_POSE, Formulation.MULTICLASS, Arch.RESNET50, False, 40, 150),
    _cell(TaskName.ISOMETRIC_TO_POSE, Formulation.MULTICLASS, Arch.VGG16, False, 58, 150),
    _cell(TaskName.ISOMETRIC_TO_POSE, Formulation.MULTICLASS, Arch.VGG16, True, 69, 150),
    _cell(TaskName.POSE_TO_ISOMETRIC, Formulation.BINARY, Arch.RESNET50, False, 6, 30),
]


def test_the_figure6_chart_shows_each_networks_wilson_interval_the_papers_bars_and_the_papers_people():
    fig = chart_figure(FIG6_CELLS, "Figure 6")
    ax = fig.axes[0]
    intervals = sorted((round(float(min(s[:, 1])), 9), round(float(max(s[:, 1])), 9))
                       for c in ax.containers if isinstance(c, matplotlib.container.ErrorbarContainer)
                       for s in c.lines[2][0].get_segments())
    assert intervals == sorted((round(c.test.low, 9), round(c.test.high, 9)) for c in FIG6_CELLS)
    heights = sorted(round(p.get_height(), 9) for p in ax.patches)
    ours = [round(c.test.value, 9) for c in FIG6_CELLS]
    papers = [round(c.paper_test / 100, 9) for c in FIG6_CELLS if c.paper_test is not None]
    assert heights == sorted(ours + papers) and len(papers) == 3
    horizontal = [seg for coll in ax.collections if isinstance(coll, LineCollection) for seg in coll.get_segments()
                  if seg[0, 1] == seg[-1, 1]]  # the error bars are vertical; the people's lines span a group
    people = {round(float(seg[0, 1]), 9) for seg in horizontal}
    expected = {round(v, 9) for t in (TaskName.ISOMETRIC_TO_POSE, TaskName.POSE_TO_ISOMETRIC)
                for v in (human_reference(t).untrained_average, human_reference(t).trained_max)}
    assert people == expected and len(horizontal) == 4  # two lines per task, none over the blank-views group
    assert any(list(line.get_ydata()) == [CHANCE, CHANCE] for line in ax.get_lines())
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0 %", "20 %", "40 %", "60 %", "80 %", "100 %"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == ["ResNet-50, this run (95 % CI)", "VGG-16, this run (95 % CI)"]
    assert "ResNet-50, SPARE3D paper" in legend and any(t.startswith("people, trained") for t in legend)
    files = chart_files(FIG6_CELLS, "Figure 6")
    assert files == chart_files(FIG6_CELLS, "Figure 6") and files[".pdf"].startswith(b"%PDF-")


def test_win_rate_intervals_are_wilsons_with_ties_as_half_wins_and_reach_the_ranking_chart():
    low, high = win_rate_interval([3, 0, 10, 0], [0, 0, 0, 0], [10, 5, 10, 0])
    for i, (k, n) in enumerate([(3, 10), (0, 5), (10, 10)]):
        assert (low[i], high[i]) == pytest.approx((wilson(k, n).low, wilson(k, n).high), abs=1e-12)
    assert np.isnan(low[3]) and np.isnan(high[3])
    tied_low, tied_high = win_rate_interval([2], [2], [6])  # 3 points of 6
    assert (tied_low[0], tied_high[0]) == pytest.approx((wilson(3, 6).low, wilson(3, 6).high))

    items = [f"{k}/{s}" for k in ("add", "remove", "deform", "perturb") for s in ("low", "high")]
    quality = dict(zip(items, np.linspace(1, 0, len(items))))
    pairs = pd.DataFrame([{"pair_id": f"p{i}-{j}", "left_id": a, "right_id": b}
                          for i, a in enumerate(items) for j, b in enumerate(items) if i < j])
    answers = simulate_judgements(pairs, quality, {"a": 0.9, "b": 0.8, "c": 0.7}, seed=1)
    side = dict(zip(pairs["pair_id"], zip(pairs["left_id"], pairs["right_id"])))
    judgements = pd.DataFrame({"left_item": [side[p][0] for p in answers["pair_id"]],
                               "right_item": [side[p][1] for p in answers["pair_id"]],
                               "left_score": answers["choice"].map({"left": 1.0, "right": 0.0, "equal": 0.5}),
                               "rater_id": answers["rater_id"]})
    table = rank_items(judgements).table
    assert (table["win_rate_low"] <= table["win_rate"]).all() and (table["win_rate"] <= table["win_rate_high"]).all()
    fig = ranking_figure(table, title="ranking")
    ax = fig.axes[0]
    (errors,) = [c for c in ax.containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
    spans = [(round(float(s[0, 0]), 9), round(float(s[1, 0]), 9), float(s[0, 1]))
             for s in errors.lines[2][0].get_segments()]
    assert [(lo, hi) for lo, hi, _ in sorted(spans, key=lambda s: s[2])] == \
        [(round(lo, 9), round(hi, 9)) for lo, hi in zip(table["win_rate_low"], table["win_rate_high"])]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(table["item"])  # best on top
    assert list(_visible(ax, "x")) == [0.0, 0.25, 0.5, 0.75, 1.0] and ax.get_xlim() == (0, 1)
    assert "95 % interval" in ax.get_xlabel()
    files = ranking_files(table, title="ranking")
    assert list(files) == [".png", ".svg", ".pdf"] and files == ranking_files(table, title="ranking")
