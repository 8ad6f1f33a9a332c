"""The training-curve chart of a baseline run, drawn with matplotlib (:mod:`spare_gen.figures`).

Two panels, each with its own honest axis: the training loss per step (pale: each step; dark: the moving average),
and the train, val and test accuracy at each epoch's end, each in its own colour, line style and marker (so a val
line under the test line still shows), with the chance level drawn and labelled on the accuracy axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from spare_gen import figures
from spare_gen.figures import BLUE, GREEN, GREY, ORANGE, PINK, SKY

WIDTH, HEIGHT = 1350, 600  # PNG pixels (9 x 4 inches at figures.DPI)
SMOOTH_WINDOW = 10
FEW_STEPS = 30  # up to this many steps each step's loss is also marked with a dot
EPOCH_LINES = 20  # up to this many epochs their ends are marked on the loss panel
NICE = [1, 2, 2.5, 5, 10]  # tick steps: 0.25 / 0.5 / 1 / 2 / 5 ... (never 0.39)
# (label, colour, line style, marker, marker face): no two series share a style
ACCURACY_STYLES = {
    "train": ("train", GREEN, "-", "o", GREEN),
    "val": ("val", ORANGE, "--", "s", "white"),
    "test": ("test", PINK, ":", "^", PINK),
}


def moving_average(values: list[float], window: int = SMOOTH_WINDOW) -> list[float]:
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def _finite(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    pairs = [(x, y) for x, y in zip(xs, ys) if y is not None and math.isfinite(y)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def curve_figure(step_loss: list[float], epoch_steps: list[int], train_acc: list[float], val_acc: list[float],
                 chance: float, title: str, test_acc: Sequence[float] = ()) -> Figure:
    """The chart as a matplotlib Figure: loss per step (left panel), accuracy per epoch end (right panel)."""
    with figures.style():
        fig = figures.new_figure(WIDTH / figures.DPI, HEIGHT / figures.DPI)
        loss_ax, acc_ax = fig.subplots(1, 2, width_ratios=(1.15, 1))
        fig.suptitle(title, fontsize=10, x=0.01, ha="left")

        steps = list(range(1, len(step_loss) + 1))
        xs, ys = _finite(steps, step_loss)
        if xs:
            loss_ax.plot(xs, ys, color=SKY, linewidth=0.8, alpha=0.7, label="each step",
                         marker="o" if len(xs) <= FEW_STEPS else None, markersize=2.5)
            smooth = moving_average(ys)
            loss_ax.plot(xs, smooth, color=BLUE, linewidth=1.8,
                         label=f"moving average of {SMOOTH_WINDOW} (last {smooth[-1]:.3f})")
            loss_ax.set_xlim(0, max(xs[-1], 1) * 1.02)
            loss_ax.set_ylim(0, max(ys) * 1.05 if max(ys) > 0 else 1)
        marked = len(epoch_steps) <= EPOCH_LINES
        if marked and epoch_steps:
            loss_ax.grid(False, axis="x")  # the epoch lines take the grid's place
        for s in epoch_steps if marked else ():
            loss_ax.axvline(s, color=GREY, linewidth=0.6, linestyle=":", zorder=0)
        loss_ax.set_title("training loss", loc="left")
        loss_ax.set_xlabel("training step" + (" (dotted: epoch ends)" if marked and epoch_steps else ""))
        loss_ax.set_ylabel("loss")
        loss_ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True, steps=NICE))
        loss_ax.yaxis.set_major_locator(MaxNLocator(nbins=6, steps=NICE))
        if xs:
            loss_ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)

        epochs = list(range(1, len(epoch_steps) + 1))
        for key, values in (("train", train_acc), ("val", val_acc), ("test", test_acc)):
            ex, ey = _finite(epochs, list(values)[:len(epochs)])
            if not ex:
                continue
            name, colour, line, marker, face = ACCURACY_STYLES[key]
            acc_ax.plot(ex, ey, color=colour, linestyle=line, linewidth=1.6, marker=marker, markersize=5,
                        markerfacecolor=face, markeredgecolor=colour, label=f"{name} (last {ey[-1]:.3f})")
        acc_ax.axhline(chance, color=GREY, linestyle=(0, (5, 3)), linewidth=1.0, zorder=1)
        acc_ax.annotate(f"chance\n{chance:g}", xy=(1.0, chance), xycoords=("axes fraction", "data"),
                        xytext=(4, 0), textcoords="offset points", ha="left", va="center", color=GREY,
                        annotation_clip=False)
        acc_ax.set_ylim(0, 1.0)
        acc_ax.set_xlim(0.5, max(len(epochs), 1) + 0.5)
        acc_ax.set_title("accuracy at each epoch's end", loc="left")
        acc_ax.set_xlabel("epoch")
        acc_ax.set_ylabel("accuracy")
        acc_ax.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True, steps=NICE, min_n_ticks=1))
        acc_ax.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=NICE))
        if len(acc_ax.get_lines()) > 1:
            acc_ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3)
    return fig


def curve_files(step_loss: list[float], epoch_steps: list[int], train_acc: list[float], val_acc: list[float],
                chance: float, title: str, test_acc: Sequence[float] = ()) -> dict[str, bytes]:
    """``{".png": ..., ".svg": ..., ".pdf": ...}`` of :func:`curve_figure`."""
    return figures.render_all(curve_figure(step_loss, epoch_steps, train_acc, val_acc, chance, title, test_acc))


def curve_png(step_loss: list[float], epoch_steps: list[int], train_acc: list[float], val_acc: list[float],
              chance: float, title: str, test_acc: Sequence[float] = ()) -> bytes:
    """PNG bytes of :func:`curve_figure`."""
    return figures.render(curve_figure(step_loss, epoch_steps, train_acc, val_acc, chance, title, test_acc), ".png")
