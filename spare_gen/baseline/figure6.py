"""SPARE3D's Figure 6 beside our runs: a Markdown table and a bar chart (matplotlib), from train-baseline histories.

Torch-free: it reads what :func:`spare_gen.baseline.train.train` returned (``history.json``'s content).
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, PercentFormatter

from spare_gen import figures
from spare_gen.baseline.options import Arch, Formulation, Protocol, recipe
from spare_gen.config.schema import TaskName
from spare_gen.data.human import human_reference
from spare_gen.data.stats import Accuracy, wilson
from spare_gen.figures import BLUE, GREEN, GREY, INK, ORANGE, VERMILION
from spare_gen.stages.questions.tasks import TASK_SPECS

ARCH_TITLES = {Arch.RESNET50: "ResNet-50", Arch.VGG16: "VGG-16", Arch.BAGNET33: "BagNet-33", Arch.SMALL: "small CNN",
               Arch.HYPOTHESES: "pose hypotheses"}
ARCH_COLOURS = {Arch.RESNET50: BLUE, Arch.VGG16: VERMILION, Arch.BAGNET33: GREEN, Arch.SMALL: GREY,
                Arch.HYPOTHESES: ORANGE}  # Okabe-Ito
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


def humans_markdown(humans: dict) -> str:
    """People on this dataset (``reports/humans.json`` of ``spare-gen evaluate OUT OUT/quiz``) beside the paper's
    people: one row per task and protocol of the test answers, pooled accuracy with its 95 % Wilson interval."""
    lines = ["| task | people | protocol | answers | test accuracy | best person | paper (people) |",
             "|---|---|---|---|---|---|---|"]
    for r in humans["results"]:
        if r["phase"] != "test":
            continue
        pooled, best = r["pooled"], r["best_person"]
        paper = "-" if r["paper"] is None else f"{100 * r['paper']:.1f} %"
        lines.append(f"| {TASK_SPECS[TaskName(r['task'])].spare3d.title} | {r['people']} | {r['protocol']} | "
                     f"{pooled['total']} | **{_pct(wilson(pooled['correct'], pooled['total']))}** | "
                     f"{100 * best['accuracy']:.1f} % | {paper} |")
    return "\n".join(lines) + "\n"


GROUP_WIDTH = 0.8  # of one group's slot on the x axis
HUMAN_STYLES = {"untrained_average": ("people, untrained: average (paper)", (0, (1, 1.5))),
                "trained_max": ("people, trained: best (paper)", (0, (6, 2, 1, 2)))}


def _group_label(task: TaskName, formulation: Formulation, blank: bool) -> str:
    return f"{TASK_SPECS[task].spare3d.title}\n{formulation.value}" + ("\nF, R, T blank" if blank else "")


def chart_figure(cells: list[Cell], title: str) -> Figure:
    """Bars like the paper's Figure 6: one group per (task, formulation, views), one pair of bars per architecture
    (this run solid, with its 95 % Wilson interval; the SPARE3D paper's value pale and hatched beside it), the
    paper's human accuracies on the task as lines across the group, and chance dashed."""
    groups: dict[tuple, list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.task, c.formulation, c.blank_views), []).append(c)
    with figures.style():
        fig = figures.new_figure(max(6.0, 1.6 + 2.1 * len(groups)), 4.2)
        ax = fig.subplots()
        fig.suptitle(title, fontsize=10, x=0.01, ha="left")
        archs_seen: list[Arch] = []
        humans_seen: set[str] = set()
        for g, ((task, formulation, blank), members) in enumerate(groups.items()):
            bar = GROUP_WIDTH / (2 * len(members))
            start = g - GROUP_WIDTH / 2
            for i, c in enumerate(members):
                colour = ARCH_COLOURS[c.arch]
                archs_seen += [c.arch] if c.arch not in archs_seen else []
                ours_x, paper_x = start + (2 * i + 0.5) * bar, start + (2 * i + 1.5) * bar
                if c.test.total:
                    err = [[c.test.value - c.test.low], [c.test.high - c.test.value]]
                    ax.bar(ours_x, c.test.value, bar * 0.95, color=colour, yerr=err, ecolor=INK, capsize=3,
                           error_kw={"linewidth": 1.0})
                    ax.annotate(f"{100 * c.test.value:.0f}", (ours_x, c.test.high), xytext=(0, 2),
                                textcoords="offset points", ha="center", va="bottom", fontsize=7)
                if c.paper_test is not None:
                    p = c.paper_test / 100
                    ax.bar(paper_x, p, bar * 0.95, color=_pale_hex(colour), edgecolor=colour, hatch="///",
                           linewidth=0.8)
                    ax.annotate(f"{c.paper_test:.0f}", (paper_x, p), xytext=(0, 2), textcoords="offset points",
                                ha="center", va="bottom", fontsize=7, color=GREY)
            reference = human_reference(task)
            if reference is not None and not blank:
                for key, (label, dash) in HUMAN_STYLES.items():
                    humans_seen.add(key)
                    ax.hlines(getattr(reference, key), g - GROUP_WIDTH / 2 - 0.05, g + GROUP_WIDTH / 2 + 0.05,
                              colors=INK, linestyles=dash, linewidth=1.2, zorder=3)
        ax.axhline(CHANCE, color=GREY, linestyle=(0, (5, 3)), linewidth=1.0, zorder=1)
        ax.annotate(f"chance\n{100 * CHANCE:g} %", xy=(1.0, CHANCE), xycoords=("axes fraction", "data"),
                    xytext=(4, 0), textcoords="offset points", ha="left", va="center", color=GREY,
                    annotation_clip=False)
        ax.set_xticks(range(len(groups)), [_group_label(*key) for key in groups])
        ax.tick_params(axis="x", length=0)
        ax.grid(False, axis="x")
        ax.set_xlim(-0.6, max(len(groups), 1) - 0.4)
        ax.set_ylim(0, 1.0)
        ax.yaxis.set_major_locator(FixedLocator([0, 0.2, 0.4, 0.6, 0.8, 1.0]))
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0, symbol=" %"))
        ax.set_ylabel("test accuracy")
        handles = []
        for arch in (Arch.RESNET50, Arch.VGG16, Arch.BAGNET33, Arch.SMALL, Arch.HYPOTHESES):  # Figure 6's order
            if arch in archs_seen:
                handles.append(Patch(facecolor=ARCH_COLOURS[arch], label=f"{ARCH_TITLES[arch]}, this run (95 % CI)"))
        for arch in (Arch.RESNET50, Arch.VGG16, Arch.BAGNET33, Arch.SMALL, Arch.HYPOTHESES):
            if arch in archs_seen and any(c.arch is arch and c.paper_test is not None for c in cells):
                handles.append(Patch(facecolor=_pale_hex(ARCH_COLOURS[arch]), edgecolor=ARCH_COLOURS[arch],
                                     hatch="///", label=f"{ARCH_TITLES[arch]}, SPARE3D paper"))
        handles += [Line2D([], [], color=INK, linestyle=dash, linewidth=1.2, label=label)
                    for key, (label, dash) in HUMAN_STYLES.items() if key in humans_seen]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.06, 1.0), fontsize=7.5)
    return fig


def chart_files(cells: list[Cell], title: str) -> dict[str, bytes]:
    """``{".png": ..., ".svg": ..., ".pdf": ...}`` of :func:`chart_figure`."""
    return figures.render_all(chart_figure(cells, title))


def chart_png(cells: list[Cell], title: str) -> bytes:
    """PNG bytes of :func:`chart_figure`."""
    return figures.render(chart_figure(cells, title), ".png")


def _pale_hex(colour: str) -> str:
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{int(255 - 0.35 * (255 - v)):02x}" for v in rgb)
