"""SPARE3D's Figure 6 beside our runs: a Markdown table and a bar chart (Pillow), from train-baseline histories.

Torch-free: it reads what :func:`spare_gen.baseline.train.train` returned (``history.json``'s content).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from spare_gen.baseline.options import Arch, Formulation, Protocol, recipe
from spare_gen.config.schema import TaskName
from spare_gen.data.stats import Accuracy, wilson
from spare_gen.stages.questions.tasks import TASK_SPECS

ARCH_TITLES = {Arch.RESNET50: "ResNet-50", Arch.VGG16: "VGG-16", Arch.BAGNET33: "BagNet-33", Arch.SMALL: "small CNN"}
ARCH_COLOURS = {Arch.RESNET50: (0, 114, 178), Arch.VGG16: (213, 94, 0), Arch.BAGNET33: (0, 158, 115),
                Arch.SMALL: (120, 120, 120)}  # Okabe-Ito
CHANCE = 0.25


@dataclass(frozen=True)
class Cell:
    """One trained cell: what ran, the chosen epoch's train accuracy and its test accuracy, with intervals.

    The chosen epoch is the best on val (protocol spare_gen) or the best on test itself (spare3d: what SPARE3D's
    trainers print, the evaluated folder's accuracy each epoch, of which the best is read off)."""

    task: TaskName
    formulation: Formulation
    arch: Arch
    blank_views: bool
    train: Accuracy
    test: Accuracy
    paper_test: float | None  # %, Figure 6 SPARE3D-CSG; None for the blank-view runs and the small CNN
    samples_per_second: float
    device: str
    epochs: int
    size: int
    protocol: Protocol = Protocol.SPARE_GEN
    epoch: int = 0  # the chosen epoch (1-based; 0: none ran)

    @property
    def label(self) -> str:
        return (recipe(self.task, self.formulation, self.arch).name + ("/blank-views" if self.blank_views else "")
                + ("/spare3d-protocol" if self.protocol is Protocol.SPARE3D else ""))


def cell_of(history: dict) -> Cell:
    """The cell a train-baseline history describes."""
    options = history["options"]
    task, formulation, arch = TaskName(history["task"]), Formulation(options["formulation"]), Arch(options["arch"])
    protocol = Protocol(options.get("protocol", Protocol.SPARE_GEN.value))
    best = history["best_epoch"]
    n_train, n_test = history["n"]["train"], history["n"]["test"]
    overall = history["test"]["overall"]
    test = wilson(overall["correct"], overall["total"])
    tests = history["test_accuracy"]
    if protocol is Protocol.SPARE3D and tests:  # the best printed epoch on the evaluated folder; the first of ties
        best = max(range(len(tests)), key=lambda i: (tests[i], -i)) + 1
        test = wilson(round(tests[best - 1] * n_test), n_test)
    train_acc = history["train_accuracy"][best - 1] if best else float("nan")
    paper = None if options["blank_views"] else recipe(task, formulation, arch).paper_test
    return Cell(task, formulation, arch, bool(options["blank_views"]),
                wilson(round(train_acc * n_train) if train_acc == train_acc else 0, n_train),
                test, paper, history["samples_per_second"],
                history["device"], options["epochs"], options["size"], protocol, best)


def cell_record(cell: Cell, history: dict) -> dict:
    """A cell as a row of figure6.json: the table's numbers, the chosen epoch and every epoch's accuracies."""
    return {"cell": cell.label, "protocol": cell.protocol.value, "epoch": cell.epoch, "train": cell.train.to_dict(),
            "test": cell.test.to_dict(), "paper_test": cell.paper_test, "samples_per_second": cell.samples_per_second,
            "device": cell.device, "epochs": cell.epochs, "epochs_run": len(history["test_accuracy"]),
            "stopped": history.get("stopped"), "size": cell.size, "n": history["n"],
            "train_seconds": history["train_seconds"],
            "per_epoch": {k: history[f"{k}_accuracy"] for k in ("train", "val", "test")}}


def _pct(a: Accuracy) -> str:
    if not a.total:
        return "n/a"
    return f"{100 * a.value:.1f} % [{100 * a.low:.1f}, {100 * a.high:.1f}]"


def markdown(cells: list[Cell]) -> str:
    """The table: one row per cell, accuracies with 95 % Wilson intervals, the paper's test value beside ours."""
    lines = ["| task | formulation | architecture | views | train accuracy | test accuracy | paper (test) | "
             "questions/s | device | epochs, size |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        paper = "-" if c.paper_test is None else f"{c.paper_test:.1f} %"
        views = ("blank" if c.blank_views else "F, R, T") + (" (SPARE3D protocol)" if c.protocol is Protocol.SPARE3D
                                                               else "")
        lines.append(f"| {TASK_SPECS[c.task].spare3d.title} | {c.formulation.value} | {ARCH_TITLES[c.arch]} | "
                     f"{views} | {_pct(c.train)} | **{_pct(c.test)}** | {paper} | "
                     f"{c.samples_per_second:.3g} | {c.device} | {c.epochs}, {c.size} px |")
    return "\n".join(lines) + "\n"


WIDTH, HEIGHT = 980, 420
LEFT, RIGHT, TOP, BOTTOM = 56, 56, 60, 60
FONT = 12
INK, GRID, CHANCE_INK = (33, 33, 33), (220, 220, 220), (150, 150, 150)


def _pale(colour: tuple[int, int, int]) -> tuple[int, int, int]:
    return tuple(int(255 - 0.35 * (255 - v)) for v in colour)


def chart_png(cells: list[Cell], title: str) -> bytes:
    """Bars like the paper's Figure 6: one group per (task, formulation, views), one pair of bars per
    architecture (ours solid with its 95 % interval, the paper's pale beside it), a dashed chance line."""
    font = ImageFont.load_default(size=FONT)
    image = Image.new("RGB", (WIDTH, HEIGHT), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM
    groups: dict[tuple, list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.task, c.formulation, c.blank_views), []).append(c)

    def y_at(v: float) -> float:
        return y1 - (y1 - y0) * v

    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        draw.line([(x0, y_at(t)), (x1, y_at(t))], fill=GRID)
        draw.text((x0 - 6, y_at(t)), f"{100 * t:.0f} %", fill=INK, font=font, anchor="rm")
    for x in range(x0, x1, 12):  # dashed chance line
        draw.line([(x, y_at(CHANCE)), (min(x + 6, x1), y_at(CHANCE))], fill=CHANCE_INK)
    draw.text((x1 + 4, y_at(CHANCE)), "chance", fill=CHANCE_INK, font=font, anchor="lm")
    slot = (x1 - x0) / max(len(groups), 1)
    for g, ((task, formulation, blank), members) in enumerate(groups.items()):
        bar = min(22.0, slot * 0.8 / (2 * len(members)))
        start = x0 + g * slot + (slot - 2 * bar * len(members)) / 2
        for i, c in enumerate(members):
            left = start + 2 * bar * i
            colour = ARCH_COLOURS[c.arch]
            if c.test.total:
                draw.rectangle([left, y_at(c.test.value), left + bar - 1, y1], fill=colour)
                mid = left + bar / 2
                draw.line([(mid, y_at(c.test.low)), (mid, y_at(c.test.high))], fill=INK, width=1)
                for v in (c.test.low, c.test.high):
                    draw.line([(mid - 3, y_at(v)), (mid + 3, y_at(v))], fill=INK)
                draw.text((mid, y_at(c.test.high) - 3), f"{100 * c.test.value:.0f}", fill=INK, font=font,
                          anchor="mb")
            if c.paper_test is not None:
                p = c.paper_test / 100
                draw.rectangle([left + bar, y_at(p), left + 2 * bar - 2, y1], fill=_pale(colour), outline=colour)
        centre = x0 + (g + 0.5) * slot
        draw.text((centre, y1 + 6), TASK_SPECS[task].spare3d.title, fill=INK, font=font, anchor="ma")
        draw.text((centre, y1 + 8 + FONT), formulation.value + (", views blank" if blank else ""), fill=INK,
                  font=font, anchor="ma")
    draw.rectangle([x0, y0, x1, y1], outline=INK)
    draw.text((x0, 10), title, fill=INK, font=font)
    x = x0
    for arch in (Arch.RESNET50, Arch.VGG16, Arch.BAGNET33, Arch.SMALL):  # Figure 6's order
        if any(c.arch is arch for c in cells):
            draw.rectangle([x, 32, x + 12, 44], fill=ARCH_COLOURS[arch])
            draw.rectangle([x + 14, 32, x + 26, 44], fill=_pale(ARCH_COLOURS[arch]), outline=ARCH_COLOURS[arch])
            draw.text((x + 30, 38), ARCH_TITLES[arch], fill=INK, font=font, anchor="lm")
            x += 40 + draw.textlength(ARCH_TITLES[arch], font=font) + 16
    draw.text((x1, 38), "test accuracy. solid: this run (95 % interval); pale: SPARE3D paper (SPARE3D-CSG)", fill=INK,
              font=font, anchor="rm")
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()
