"""TaskSpec: everything one SPARE3D task is, in one record; each task module under ``stages/questions/tasks/`` makes one.

A spec holds the task's answer layout, its question row (its Parquet columns), the per-model unit (what it needs and
the work it does on a Dask worker), how a question row is built from an accepted model, the validator's
rules for a row, the contact-sheet cells, what the loaders hand out, what the bias audit reads, and what the
modules above the question stage ask of a task (its SPARE3D export layout, Hugging Face categories, the paper's
human accuracies, what people taking it are told). A task with variants (``questions.*`` settings that change its choices or rules) declares
``variant`` (called with the task's own options section, ``spare_gen.config.tasks``): the spec a run uses is
``spec.resolved(config.questions)``, so ``n_answers`` follows the variant.
Adding a task is one module plus a ``TaskName`` member; no module outside ``stages/questions/tasks/`` names a task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable


from spare_gen.canvas.views import FIXED_VIEWS
from spare_gen.config.schema import QuestionsConfig, TaskName
from spare_gen.config.tasks import task_options
from spare_gen.stages.questions.layout import AnswerSide
from spare_gen.stages.questions.schema import QuestionCommon
from spare_gen.stages.questions.settings import QuestionResult


class TargetKind(str, Enum):
    """What a generation task's target is, for the loaders."""

    NONE = "none"
    DRAWING = "drawing"  # a drawing column <prefix>_svg / <prefix>_png
    POINTS = "points"  # an (n, 3) float32 column


class UnitInput(Enum):
    """What a task's per-model unit reads besides its model id (added by the client before it sends the unit, or
    read on a worker: ``spare_gen.stages.questions.assembly.inputs``)."""

    ISOMETRIC_POLYLINES = "isometric_polylines"  # ``views``: the isometric drawings as polylines (symmetry checks)
    SHAPE_AND_FRAMING = "shape_and_framing"  # ``shape_path``, ``framing``, ``hlr_method``: work in the child


@dataclass(frozen=True)
class LoaderKeys:
    """The item keys a loader hands out besides the F, R, T views (and ``answer`` for multiple-choice tasks).

    ``drawing``: item key -> drawing column prefix of one extra input drawing; ``candidates``: prefix of the
    candidate drawing lists (or None); ``pose``: integer column of the query pose (or None); ``target``:
    the target's kind and its column (a drawing prefix or the points column). Nothing else reaches a model:
    columns that map candidates to cut objects or poses stay in the Parquet only.
    """

    drawing: dict[str, str] = field(default_factory=dict)
    candidates: str | None = None
    pose: str | None = None
    target: TargetKind = TargetKind.NONE
    target_column: str | None = None

    def query_pose(self, row: QuestionCommon) -> int | None:
        """The row's query pose (the ``pose`` column), None for a task without one."""
        return None if self.pose is None else int(getattr(row, self.pose))

    def target_points(self, row: QuestionCommon) -> Any:
        """The row's target point cloud (a points target's column), None for a task without one."""
        return getattr(row, self.target_column) if self.target is TargetKind.POINTS and self.target_column else None


@dataclass(frozen=True)
class Spare3dLayout:
    """How ``spare-gen export-spare3d`` writes the task in the published SPARE3D loaders' layout.

    ``folder``: the task's folder; ``answer_text``: answer.json holds strings ("0", "1", ...) rather than ints;
    ``drawing_file``: file name of the extra input drawing (``LoaderKeys.drawing``) in a question's folder;
    ``target_file``: file name of a drawing target under ``DicAns/``; ``title``: the task's name in the SPARE3D
    paper (its tables and Figure 6).
    """

    folder: str
    title: str = ""
    answer_text: bool = False
    drawing_file: str | None = None
    target_file: str | None = None


@dataclass(frozen=True)
class PaperRecipes:
    """One formulation of the task in SPARE3D's Figure 6 (``spare_gen.baseline.options.FIGURE6`` reads them).

    ``formulation``: a ``spare_gen.baseline.options.Formulation`` value (binary, metric, multiclass); ``source``:
    where in the paper's supplementary the values are; ``cells``: architecture value (vgg16, resnet50, bagnet33) ->
    (learning rate, batch size, epochs, the paper's SPARE3D-CSG test accuracy %).
    """

    formulation: str
    source: str
    cells: dict[str, tuple[float, int, int, float]]


@dataclass(frozen=True)
class TaskSpec:
    """One SPARE3D task (see the module docstring); the callables are module-level functions (picklable)."""

    name: TaskName
    n_answers: int  # choices of a multiple-choice task, 0 for the generation tasks
    summary: str  # one paragraph for the dataset card
    row: type[QuestionCommon]  # the task's question row: the common columns, then its own (its table's schema)
    build_row: Callable[..., dict]  # (seed, item: Accepted, answer, **split_extras) -> task columns
    check_row: Callable[..., list[str]]  # (ds: LoadedDataset, row) -> one line per violation
    sheet_cells: Callable[..., list]  # (out, row) -> the task's contact-sheet cells after F, R, T
    loader: LoaderKeys
    run_unit: Callable[..., QuestionResult] | None = None  # (unit, QuestionSettings) -> its result; None: accept all
    unit_inputs: UnitInput | None = None  # what run_unit reads besides the model id
    split_extras: Callable[..., list[dict]] | None = None  # (seed, split, items) -> per-item build_row kwargs
    cut_view_rows: Callable[..., list[dict]] | None = None  # (item) -> rows of questions/cut_views.parquet
    answer_side: AnswerSide | None = None  # what the bias audit's question-blind probes read
    answer_side_prefix: str | None = None  # drawing column prefix of the answer side
    # the pose every candidate drawing shows when the row names none (three_view_to_isometric: pose 2); None otherwise
    candidate_pose: int | None = None
    # path columns whose files are per-question, content-named copies (names of the sources tell the answer)
    content_named_columns: tuple[str, ...] = ()
    # the list column with one entry per choice: its length is a row's choice count (validate's balance rule)
    choice_column: str | None = None
    spare3d: Spare3dLayout | None = None  # the SPARE3D export layout
    hf_categories: tuple[str, ...] = ()  # Hugging Face task categories, for the dataset card
    human_reference: tuple[float, float] | None = None  # the paper's (untrained average, trained max) accuracy
    # what a person answering the task is told (`spare-gen quiz`): the paper's own definition of the task
    instructions: str = ""
    check_counts_row: Callable[..., list[str]] | None = None  # (ds, row) -> lines: the task's part of rule 7
    variant: Callable[..., "TaskSpec"] | None = None  # (the task's Options) -> the spec for those options
    # (the task's Options) -> what the dataset card says of them, e.g. "isometric-to-pose choices `upper` (...)"
    card_options: Callable[..., str] | None = None
    card_example: bool = False  # the task the card's loading examples name (one task declares it)
    figure6: tuple[PaperRecipes, ...] = ()  # the paper's baseline recipes, first formulation the default; () if none
    # the model drawings (drawing-stage view names) the task's units, rows, rules, filters and sheets read, under every
    # variant (a rerun with another variant reuses the drawings): the drawings stage draws only the union over the
    # tasks a run asks for (``tasks.drawn_views``); default: all 11
    views: tuple[str, ...] = FIXED_VIEWS

    def resolved(self, questions: QuestionsConfig) -> "TaskSpec":
        """The spec a run with these ``questions`` settings uses (this one, if the task has no variants)."""
        return self.variant(task_options(self.name, questions)) if self.variant is not None else self

    def choices(self, row: QuestionCommon) -> list:
        """The row's choice list (``choice_column``: candidates or choice poses, in answer order); [] if none."""
        return list(getattr(row, self.choice_column) or []) if self.choice_column else []

    def n_choices(self, row: QuestionCommon) -> int:
        """How many choices ``row`` offers (0 for a generation task)."""
        return len(self.choices(row)) if self.choice_column else self.n_answers
    # (config, out, views: model_id -> view -> {svg, png, png_sha256} of every usable model) -> model_id -> the
    # QuestionRejection of each model the task leaves out before any unit runs (on the client); None: none
    model_filter: Callable[..., dict] | None = None
