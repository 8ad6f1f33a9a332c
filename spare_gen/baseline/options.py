"""Train options and SPARE3D's Figure 6 recipes, declared once and importable without torch.

The command line of ``spare-gen train-baseline`` is built from :class:`TrainOptions` (each field's help text and
default), so an option exists in one place. Options left unset (``None``) take the recipe's value for the chosen
(task, formulation, architecture): the paper's learning rate, batch size and epochs for VGG-16, ResNet-50 and
BagNet-33, today's small-CNN values for ``small``.

Every Figure 6 cell's recipe is one row of :data:`FIGURE6`, which each task declares on its spec (``figure6``), cited
to the supplementary material of Wang et al.,
"SPARE3D: A Dataset for SPAtial REasoning on Three-View Line Drawings", CVPR 2020 (section C, "Implementation
Details of Baseline Methods"), with the paper's SPARE3D-CSG test accuracy beside it (the chart
``docs/figs/baseline_barchart.PNG`` of ai4ce/SPARE3D).
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from enum import Enum

from functools import cache

from spare_gen.config.schema import TaskName


class Arch(str, Enum):
    SMALL = "small"
    VGG16 = "vgg16"
    RESNET50 = "resnet50"
    BAGNET33 = "bagnet33"
    # isometric_to_pose only: one scorer shared by the four choices, each with F, R, T re-arranged as that pose
    # would show them (spare_gen.baseline.pose_net); trains on a CPU
    HYPOTHESES = "hypotheses"


class Protocol(str, Enum):
    """How a run is evaluated and what its network sees."""

    SPARE_GEN = "spare_gen"  # best epoch chosen on val, that epoch's weights reported on test; F, R, T as drawn
    # As ai4ce/SPARE3D's trainers: each epoch scores one evaluated folder (here: test) and the best of those numbers
    # is the result (no separate test pass, no selection on val); and, for isometric-to-pose, the R slot holds the
    # isometric drawing where their loader's glob("*r.png")[0] returns answer.png (see spare_gen.baseline.train).
    SPARE3D = "spare3d"


class Formulation(str, Enum):
    BINARY = "binary"  # a score per (F, R, T, candidate) stack, BCE against the one-hot answer (supplementary B.1)
    METRIC = "metric"  # distance between an F/R/T code and a candidate code, margin ranking loss (B.1, B.3)
    MULTICLASS = "multiclass"  # one 4-way classifier over (F, R, T, isometric), cross-entropy (B.2)


PAPER_ARCHS = (Arch.VGG16, Arch.RESNET50, Arch.BAGNET33)
PAPER_SIZE = 200  # the released SPARE3D drawings are 200 x 200; the networks ran at that size
MARGIN = 2.0  # margin ranking loss margin m (B.1, eq. 2; MarginRankingLoss(margin=2.0) in the published trainers)
CODE_DIM = 128  # K: the F/R/T (+ candidate) code before the pose joins (B.1 metric learning M, B.3 K)
POSE_METRIC_DIM = 50  # M of pose-to-isometric metric learning (B.3)


@dataclass(frozen=True)
class Recipe:
    task: TaskName
    formulation: Formulation
    arch: Arch
    lr: float
    batch_size: int
    epochs: int
    paper_test: float | None  # SPARE3D-CSG test accuracy in Figure 6 (%); None where the paper has no cell
    source: str  # where the values come from

    @property
    def name(self) -> str:
        """``task/formulation/arch``, e.g. ``isometric_to_pose/multiclass/vgg16``."""
        return f"{self.task.value}/{self.formulation.value}/{self.arch.value}"


@cache
def _figure6() -> tuple[tuple[Recipe, ...], dict[TaskName, tuple[Formulation, ...]]]:
    """Figure 6's cells, as each task declares them on its spec (``TaskSpec.figure6``): one recipe per (task,
    formulation, architecture); and each task's formulations in its spec's order, the first its default. Read on first
    use (``FIGURE6``, ``FORMULATIONS``): the task registry loads the tables' libraries, which ``--help`` does without."""
    from spare_gen.stages.questions.tasks import TASK_SPECS
    figure6 = tuple(
        Recipe(task, Formulation(recipes.formulation), Arch(arch), lr, batch, epochs, paper, recipes.source)
        for task, spec in TASK_SPECS.items() for recipes in spec.figure6
        for arch, (lr, batch, epochs, paper) in recipes.cells.items())
    formulations_ = {task: tuple(Formulation(recipes.formulation) for recipes in spec.figure6)
                     for task, spec in TASK_SPECS.items() if spec.figure6}
    return figure6, formulations_


def __getattr__(name: str) -> object:
    """``FIGURE6`` (every cell's recipe) and ``FORMULATIONS`` (task -> its formulations), built on first use."""
    if name == "FIGURE6":
        return _figure6()[0]
    if name == "FORMULATIONS":
        return _figure6()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SMALL_LR, SMALL_BATCH, SMALL_EPOCHS, SMALL_SIZE = 1e-3, 16, 10, 64  # the small CNN's values (not in the paper)
# --arch hypotheses: AdamW with a one-cycle schedule peaking at this rate, 12 epochs (test accuracy flat from
# epoch 10 at 4,000 questions: benchmarks/learning/); fed at the drawings' own 200 px, the network works at 64
HYPOTHESES_LR, HYPOTHESES_BATCH, HYPOTHESES_EPOCHS = 2e-3, 32, 12
HYPOTHESES_WEIGHT_DECAY = 1e-4


def chooses_poses(task: TaskName) -> bool:
    """Whether the task's choices are poses of one drawing (its answer side is the classes, as isometric_to_pose's),
    not candidate drawings."""
    from spare_gen.stages.questions.layout import AnswerSide
    from spare_gen.stages.questions.tasks import TASK_SPECS

    return TASK_SPECS[task].answer_side is AnswerSide.CLASSES


def hypotheses_tasks() -> tuple[TaskName, ...]:
    """The tasks ``--arch hypotheses`` trains: those whose choices are poses of one drawing (the task spec's answer
    side is the classes, as isometric_to_pose's), or drawings that all show one known pose (candidates with a query
    pose, as pose_to_isometric's, or the spec's ``candidate_pose``, as three_view_to_isometric's)."""
    from spare_gen.stages.questions.layout import AnswerSide
    from spare_gen.stages.questions.tasks import TASK_SPECS

    return tuple(t for t, spec in TASK_SPECS.items() if chooses_poses(t) or (
        spec.answer_side is AnswerSide.CANDIDATES and (spec.loader.pose is not None or spec.candidate_pose)))


def formulations(task: TaskName) -> tuple[Formulation, ...]:
    """The formulations the paper trains ``task`` with; the first is the default."""
    return _figure6()[1][task]


def recipe(task: TaskName, formulation: Formulation, arch: Arch) -> Recipe:
    """The Figure 6 cell (task, formulation, arch), or the small CNN's (``small``) or the hypotheses network's values
    (``hypotheses``, always multiclass: it scores every choice)."""
    if formulation not in formulations(task) and arch is not Arch.HYPOTHESES:
        raise ValueError(f"--formulation {formulation.value}: {task.value} is trained as "
                         f"{' or '.join(f.value for f in formulations(task))}")
    if arch is Arch.SMALL:
        return Recipe(task, formulation, arch, SMALL_LR, SMALL_BATCH, SMALL_EPOCHS, None, "spare_gen's small CNN")
    if arch is Arch.HYPOTHESES:
        if formulation is not Formulation.MULTICLASS:
            raise ValueError(f"--formulation {formulation.value}: --arch hypotheses scores every choice and trains "
                             "them as one multiclass choice (--formulation multiclass)")
        if task not in hypotheses_tasks():
            raise ValueError(f"--arch hypotheses: {task.value} has no choices of a known pose; it trains "
                             f"{', '.join(t.value for t in hypotheses_tasks())} only")
        return Recipe(task, formulation, arch, HYPOTHESES_LR, HYPOTHESES_BATCH, HYPOTHESES_EPOCHS, None,
                      "spare_gen's pose-hypotheses network (CPU)")
    return next(r for r in _figure6()[0] if (r.task, r.formulation, r.arch) == (task, formulation, arch))


def _help(text: str) -> dict:
    return {"help": text}


@dataclass(frozen=True)
class TrainOptions:
    """What ``spare-gen train-baseline`` takes besides the dataset and task; ``None`` means the recipe's value."""

    arch: Arch = field(default=Arch.SMALL, metadata=_help(
        "network: the paper's vgg16, resnet50 or bagnet33 (SPARE3D's first-layer change), the small CNN, or "
        "hypotheses (CPU; the tasks whose choices show known poses: F, R, T re-arranged and warped per choice, "
        "one shared scorer)"))
    formulation: Formulation | None = field(default=None, metadata=_help(
        "binary or metric (candidate tasks), multiclass (isometric_to_pose, and every task with --arch "
        "hypotheses); default: the task's first"))
    epochs: int | None = field(default=None, metadata=_help("training epochs; default: the recipe's"))
    batch_size: int | None = field(default=None, metadata=_help("questions per step; default: the recipe's"))
    lr: float | None = field(default=None, metadata=_help("Adam learning rate; default: the recipe's"))
    size: int | None = field(default=None, metadata=_help(
        f"images resized to SIZE x SIZE; default: {PAPER_SIZE} for the paper's networks, {SMALL_SIZE} for small"))
    seed: int = field(default=0, metadata=_help("seeds initial weights and batch order"))
    max_steps: int = field(default=0, metadata=_help("stop after this many steps (0 = all epochs)"))
    workers: int = field(default=0, metadata=_help("DataLoader worker processes for the one decoding pass"))
    threads: int = field(default=0, metadata=_help(
        "torch CPU threads (0: the cores this process may run on); OpenMP waits passively either way"))
    channels: str = field(default="rgb", metadata=_help("rgb or bgr (OpenCV's order, as SPARE3D's loaders)"))
    device: str = field(default="auto", metadata=_help("auto (a GPU if present), cpu, cuda, ..."))
    bf16: bool = field(default=False, metadata=_help("bfloat16 autocast for the forward pass (GPUs)"))
    blank_views: bool = field(default=False, metadata=_help(
        "replace F, R and T by blank paper (all white, no ink): what the networks learn without the three views"))
    protocol: Protocol = field(default=Protocol.SPARE_GEN, metadata=_help(
        "spare_gen: best epoch chosen on val, reported on test; spare3d: as SPARE3D's trainers, the best epoch's "
        "test accuracy, and the isometric drawing as R where their *r.png glob picks answer.png"))
    questions: int | None = field(default=None, metadata=_help(
        "only each split's first N questions (a quick run); default: all"))

    def resolved(self, task: TaskName) -> "TrainOptions":
        """These options with every ``None`` replaced by the recipe's value; checked."""
        formulation = self.formulation or (Formulation.MULTICLASS if self.arch is Arch.HYPOTHESES
                                           else formulations(task)[0])
        r = recipe(task, formulation, self.arch)
        size = PAPER_SIZE if self.arch in (*PAPER_ARCHS, Arch.HYPOTHESES) else SMALL_SIZE
        out = dataclasses.replace(
            self, formulation=formulation, epochs=r.epochs if self.epochs is None else self.epochs,
            batch_size=r.batch_size if self.batch_size is None else self.batch_size,
            lr=r.lr if self.lr is None else self.lr, size=size if self.size is None else self.size)
        out.check()
        return out

    def check(self) -> None:
        for name in ("epochs", "batch_size", "size", "questions"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
        if self.lr is not None and not self.lr > 0:
            raise ValueError(f"--lr must be positive, got {self.lr}")
        if self.arch is Arch.BAGNET33 and self.size is not None and self.size < BAGNET_MIN_SIZE:
            raise ValueError(f"--size {self.size}: bagnet33 sees 33 x 33 patches without padding; "
                             f"use at least {BAGNET_MIN_SIZE}")
        if self.channels not in ("rgb", "bgr"):
            raise ValueError(f"--channels: unknown channel order {self.channels!r}; use rgb or bgr")


BAGNET_MIN_SIZE = 33


def option_fields() -> list[tuple[dataclasses.Field, type]]:
    """Each option's field and its value type (``int`` for ``int | None``, the enum for enums, ``bool`` for flags)."""
    hints = typing.get_type_hints(TrainOptions)
    out = []
    for f in dataclasses.fields(TrainOptions):
        kind = hints[f.name]
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        out.append((f, args[0] if args else kind))
    return out


def options_from(values: dict) -> TrainOptions:
    """TrainOptions from parsed command-line values keyed by field name (extra keys ignored)."""
    chosen = {}
    for f, kind in option_fields():
        if f.name in values:
            value = values[f.name]
            chosen[f.name] = kind(value) if issubclass(kind, Enum) and value is not None else value
    return TrainOptions(**chosen)
