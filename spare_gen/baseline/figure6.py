"""SPARE3D's Figure 6 beside our runs: a Markdown table and a bar chart (matplotlib), from train-baseline histories,
with people beside the networks.

One table and one chart hold four things, each with its 95 % Wilson interval and its n: the paper's networks
(Figure 6's values on its 500 test questions a task), this dataset's networks (the runs), the paper's people (its
untrained average, at least 400 answers a task, and its trained best, 100 answers) and this dataset's people
(``reports/humans.json`` of ``spare-gen evaluate OUT OUT/quiz``: every test answer pooled). The paper gives values,
not counts of right answers: its intervals are those of the value at its n, a guide to its precision. The dataset
card's "Human performance" section is the same table (:func:`card_table`).

Torch-free: it reads what :func:`spare_gen.baseline.train.train` returned (``history.json``'s content).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, PercentFormatter

from spare_gen import figures
from spare_gen.baseline.options import Arch, Formulation, Protocol, recipe
from spare_gen.config.schema import TaskName
from spare_gen.data.human import human_reference
from spare_gen.data.stats import CONFIDENCE, Accuracy, wilson, wilson_bounds
from spare_gen.data.human_scores import report_paths
from spare_gen.figures import BLUE, GREEN, GREY, INK, ORANGE, PINK, SKY, VERMILION
from spare_gen.stages.questions.tasks import TASK_SPECS

ARCH_TITLES = {Arch.RESNET50: "ResNet-50", Arch.VGG16: "VGG-16", Arch.BAGNET33: "BagNet-33", Arch.SMALL: "small CNN",
               Arch.HYPOTHESES: "pose hypotheses"}
ARCH_COLOURS = {Arch.RESNET50: BLUE, Arch.VGG16: VERMILION, Arch.BAGNET33: GREEN, Arch.SMALL: GREY,
                Arch.HYPOTHESES: ORANGE}  # Okabe-Ito
CHANCE = 0.25
PAPER_NETWORK_N = 500  # SPARE3D-CSG's test questions a task (4,000 / 500 / 500), behind each Figure 6 value
FIGURE6_FILE = "figure6.json"
PEOPLE_COLOURS = {"untrained": PINK, "trained": SKY}


@dataclass(frozen=True)
class PaperPeople:
    """How the paper measured people under a protocol: which value it reports and how many answers stand behind it."""

    key: str  # HumanReference's field
    n: int  # answers behind the value (untrained: at least this many)
    what: str
    summary: str  # one word for the chart's legend


PAPER_PEOPLE = {
    "untrained": PaperPeople("untrained_average", 400, "average of 100+ people, 4 questions each", "average"),
    "trained": PaperPeople("trained_max", 100, "best of 5 trained people, 100 questions each", "best"),
}


@dataclass(frozen=True)
class PaperValue:
    """A value the paper reports (a fraction) at its n, with the Wilson interval of that value at that n."""

    value: float
    total: int
    low: float
    high: float

    def to_dict(self) -> dict:
        return {"accuracy": self.value, "total": self.total, "ci": [self.low, self.high], "confidence": CONFIDENCE}


def paper_accuracy(value: float, n: int) -> PaperValue:
    """The paper's ``value`` at its ``n`` (the value as printed; the interval as Wilson's for value x n of n)."""
    low, high = wilson_bounds(value, n)
    return PaperValue(value, n, float(low), float(high))


@dataclass(frozen=True)
class PeopleRow:
    """People on one task under one protocol: this dataset's (pooled test answers; None when nobody answered) and
    the paper's (None where the paper has no value)."""

    task: TaskName
    protocol: str
    ours: Accuracy | None
    people: int
    best: float | None
    paper: PaperValue | None

    @property
    def label(self) -> str:
        return f"people/{self.protocol}/{self.task.value}"


def read_humans(out: Path) -> dict | None:
    """``reports/humans.json`` of the dataset, or None when nobody's answers were scored."""
    path = report_paths(Path(out))[0]
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def people_rows(humans: dict | None, tasks) -> list[PeopleRow]:
    """Per task of ``tasks`` (first appearance order) and protocol: this dataset's people and the paper's."""
    scored = {(r["protocol"], r["task"]): r for r in (humans or {}).get("results", []) if r["phase"] == "test"}
    rows = []
    for task in dict.fromkeys(TaskName(t) for t in tasks):
        reference = human_reference(task)
        for protocol, paper in PAPER_PEOPLE.items():
            r = scored.get((protocol, task.value))
            value = getattr(reference, paper.key) if reference else None
            if r is None and value is None:
                continue
            ours = wilson(r["pooled"]["correct"], r["pooled"]["total"]) if r else None
            rows.append(PeopleRow(task, protocol, ours, r["people"] if r else 0,
                                  r["best_person"]["accuracy"] if r else None,
                                  paper_accuracy(value, paper.n) if value is not None else None))
    return rows


def people_record(row: PeopleRow) -> dict:
    """A people row as a record of figure6.json (beside the networks' ``cell_record``)."""
    return {"kind": "people", "cell": row.label, "task": row.task.value, "protocol": row.protocol,
            "test": row.ours.to_dict() if row.ours else None, "people": row.people, "best_person": row.best,
            "paper": row.paper.to_dict() if row.paper else None, "paper_what": PAPER_PEOPLE[row.protocol].what}


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
    paper = paper_accuracy(cell.paper_test / 100, PAPER_NETWORK_N) if cell.paper_test is not None else None
    return {"kind": "network", "cell": cell.label, "protocol": cell.protocol.value, "epoch": cell.epoch,
            "train": cell.train.to_dict(),
            "test": cell.test.to_dict(), "paper_test": cell.paper_test,
            "paper": paper.to_dict() if paper else None, "samples_per_second": cell.samples_per_second,
            "device": cell.device, "epochs": cell.epochs, "epochs_run": len(history["test_accuracy"]),
            "stopped": history.get("stopped"), "size": cell.size, "n": history["n"],
            "train_seconds": history["train_seconds"],
            "per_epoch": {k: history[f"{k}_accuracy"] for k in ("train", "val", "test")}}


def _pct(a: Accuracy | PaperValue | None) -> str:
    if a is None or not a.total:
        return "n/a"
    return f"{100 * a.value:.1f} % [{100 * a.low:.1f}, {100 * a.high:.1f}]"


def _paper(a: PaperValue | None, what: str = "") -> str:
    return "-" if a is None else f"{_pct(a)}, n {a.total}" + (f": {what}" if what else "")


HEADER = ["| task | formulation | who | views | train accuracy | test accuracy [95 % CI] | n | paper [95 % CI], n | "
          "questions/s | device | epochs, size |", "|---|---|---|---|---|---|---|---|---|---|---|"]


def network_line(c: Cell) -> str:
    paper = paper_accuracy(c.paper_test / 100, PAPER_NETWORK_N) if c.paper_test is not None else None
    views = ("blank" if c.blank_views else "F, R, T") + (" (SPARE3D protocol)" if c.protocol is Protocol.SPARE3D
                                                           else "")
    return (f"| {TASK_SPECS[c.task].spare3d.title} | {c.formulation.value} | {ARCH_TITLES[c.arch]} | "
            f"{views} | {_pct(c.train)} | **{_pct(c.test)}** | {c.test.total} | {_paper(paper)} | "
            f"{c.samples_per_second:.3g} | {c.device} | {c.epochs}, {c.size} px |")


def people_line(r: PeopleRow) -> str:
    who = f"people, {r.protocol}" + (f" ({r.people} {'person' if r.people == 1 else 'people'}, best "
                                     f"{100 * r.best:.1f} %)" if r.ours else "")
    ours = f"**{_pct(r.ours)}**" if r.ours else "not measured"
    return (f"| {TASK_SPECS[r.task].spare3d.title} | - | {who} | F, R, T | - | {ours} | "
            f"{r.ours.total if r.ours else '-'} | {_paper(r.paper, PAPER_PEOPLE[r.protocol].what)} | - | - | - |")


def markdown(cells: list[Cell], people: list[PeopleRow] = ()) -> str:
    """The table: the networks (one row per cell, train and test accuracy, the paper's value beside) and people
    (one row per task and protocol, this dataset's pooled test answers and the paper's people beside), each with
    its 95 % Wilson interval and n; a task's rows together, networks first."""
    order = list(dict.fromkeys([c.task for c in cells] + [r.task for r in people]))
    lines = list(HEADER)
    for task in order:
        lines += [network_line(c) for c in cells if c.task is task]
        lines += [people_line(r) for r in people if r.task is task]
    notes = [f"Accuracy with its 95 % Wilson interval; n: test questions (networks) or test answers (people). The "
             f"paper's networks: Figure 6 on SPARE3D-CSG's {PAPER_NETWORK_N} test questions a task; the paper's "
             "intervals are those of its value at its n."]
    if people:
        notes.append("People: this dataset's are every test answer of `spare-gen quiz` pooled (`spare-gen evaluate "
                     "OUT OUT/quiz`); the paper's were measured on its own questions, not these.")
    return "\n".join(lines) + "\n\n" + " ".join(notes) + "\n"


def record_cell(record: dict) -> Cell:
    """A network record of figure6.json back as a Cell (what the card's table needs of it)."""
    label = record["cell"].split("/")
    protocol = Protocol(record.get("protocol", Protocol.SPARE_GEN.value))
    acc = {k: wilson(record[k]["correct"], record[k]["total"]) for k in ("train", "test")}
    return Cell(TaskName(label[0]), Formulation(label[1]), Arch(label[2]), "blank-views" in label, acc["train"],
                acc["test"], record.get("paper_test"), record["samples_per_second"], record["device"],
                record["epochs"], record["size"], protocol, record.get("epoch", 0))


def card_table(out: Path | None, humans: dict) -> str:
    """The dataset card's table: Figure 6's own table with this dataset's people, and its networks when
    ``OUT/figure6/figure6.json`` (the pipeline's default place) holds a run."""
    path = Path(out) / "figure6" / FIGURE6_FILE if out is not None else None
    cells = []
    if path is not None and path.is_file():
        try:
            cells = [record_cell(r) for r in json.loads(path.read_text(encoding="utf-8"))
                     if r.get("kind", "network") == "network"]
        except (ValueError, KeyError, TypeError):
            cells = []
    tasks = [c.task for c in cells] + [r["task"] for r in humans["results"]]
    return markdown(cells, people_rows(humans, tasks))


def humans_markdown(humans: dict) -> str:
    """People on this dataset (``reports/humans.json``) beside the paper's people, in Figure 6's table."""
    return markdown([], people_rows(humans, [r["task"] for r in humans["results"]]))


GROUP_WIDTH = 0.8  # of one group's slot on the x axis
HUMAN_STYLES = {"untrained_average": ("people, untrained: average (paper)", (0, (1, 1.5))),
                "trained_max": ("people, trained: best (paper)", (0, (6, 2, 1, 2)))}


def _group_label(task: TaskName, formulation: Formulation, blank: bool) -> str:
    return f"{TASK_SPECS[task].spare3d.title}\n{formulation.value}" + ("\nF, R, T blank" if blank else "")


def _people_group(ax, g: int, rows: list[PeopleRow]) -> None:
    """A task's people: per protocol, this dataset's pooled accuracy solid with its interval, the paper's pale and
    hatched with its interval beside it."""
    bar = GROUP_WIDTH / (2 * len(rows))
    start = g - GROUP_WIDTH / 2
    for i, r in enumerate(rows):
        colour = PEOPLE_COLOURS[r.protocol]
        ours_x, paper_x = start + (2 * i + 0.5) * bar, start + (2 * i + 1.5) * bar
        for x, a, solid in ((ours_x, r.ours, True), (paper_x, r.paper, False)):
            if a is None or not a.total:
                continue
            err = [[a.value - a.low], [a.high - a.value]]
            ax.bar(x, a.value, bar * 0.95, color=colour if solid else _pale_hex(colour), edgecolor=colour,
                   hatch=None if solid else "///", linewidth=0.8, yerr=err, ecolor=INK if solid else GREY,
                   capsize=3, error_kw={"linewidth": 1.0})
            ax.annotate(f"{100 * a.value:.0f}", (x, a.high), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7, color=INK if solid else GREY)


def chart_figure(cells: list[Cell], title: str, people: list[PeopleRow] = ()) -> Figure:
    """Bars like the paper's Figure 6: one group per (task, formulation, views), one pair of bars per architecture
    (this run solid, with its 95 % Wilson interval; the SPARE3D paper's value pale and hatched beside it), the
    paper's human accuracies on the task as lines across the group, and chance dashed. With ``people``, a group per
    task of people beside its networks: this dataset's people and the paper's, each protocol a pair of bars with
    its interval; a note under the chart gives the n of each."""
    groups: dict[tuple, list] = {}
    for c in cells:
        groups.setdefault((c.task, c.formulation, c.blank_views), []).append(c)
    for r in people:
        groups.setdefault((r.task, None, False), []).append(r)
    if people:  # a task's people right after its networks
        tasks = list(dict.fromkeys(key[0] for key in groups))
        groups = dict(sorted(groups.items(), key=lambda kv: (tasks.index(kv[0][0]), kv[0][1] is None)))
    with figures.style():
        fig = figures.new_figure(max(6.0, 1.6 + 2.1 * len(groups)), 4.6 if people else 4.2)
        ax = fig.subplots()
        fig.suptitle(title, fontsize=10, x=0.01, ha="left")
        archs_seen: list[Arch] = []
        humans_seen: set[str] = set()
        for g, ((task, formulation, blank), members) in enumerate(groups.items()):
            if formulation is None:
                _people_group(ax, g, members)
                continue
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
        ax.set_xticks(range(len(groups)), [_group_label(*key) if key[1] is not None
                                           else f"{TASK_SPECS[key[0]].spare3d.title}\npeople" for key in groups])
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
        for protocol, colour in PEOPLE_COLOURS.items():
            mine = [r for r in people if r.protocol == protocol]
            if any(r.ours for r in mine):
                handles.append(Patch(facecolor=colour, label=f"people, {protocol}: this dataset (95 % CI)"))
            if any(r.paper for r in mine):
                handles.append(Patch(facecolor=_pale_hex(colour), edgecolor=colour, hatch="///",
                                     label=f"people, {protocol}: {PAPER_PEOPLE[protocol].summary} (paper, 95 % CI)"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.06, 1.0), fontsize=7.5)
        if people:  # under the axes, laid out with them
            fig.supxlabel(chart_note(cells, people), x=0.01, ha="left", fontsize=6.5, color=GREY, linespacing=1.4)
    return fig


def chart_note(cells: list[Cell], people: list[PeopleRow]) -> str:
    """The n of every bar, under the chart."""
    nets = sorted({c.test.total for c in cells})
    lines = ["n: " + (f"this run's networks, test questions a bar: {', '.join(map(str, nets))}; " if nets else "")
             + f"the paper's networks {PAPER_NETWORK_N} test questions a task; the paper's people: untrained at "
             f"least {PAPER_PEOPLE['untrained'].n} answers (average), trained {PAPER_PEOPLE['trained'].n} (best "
             "person)"]
    for task in dict.fromkeys(r.task for r in people):
        mine = [f"{r.protocol} {r.ours.total} answers of {r.people} {'person' if r.people == 1 else 'people'}"
                for r in people if r.task is task and r.ours]
        lines.append(f"this dataset's people, {TASK_SPECS[task].spare3d.title}: {', '.join(mine) or 'not measured'}")
    return "\n".join(lines)


def chart_files(cells: list[Cell], title: str, people: list[PeopleRow] = ()) -> dict[str, bytes]:
    """``{".png": ..., ".svg": ..., ".pdf": ...}`` of :func:`chart_figure`."""
    return figures.render_all(chart_figure(cells, title, people))


def chart_png(cells: list[Cell], title: str) -> bytes:
    """PNG bytes of :func:`chart_figure`."""
    return figures.render(chart_figure(cells, title), ".png")


def _pale_hex(colour: str) -> str:
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{int(255 - 0.35 * (255 - v)):02x}" for v in rgb)
