"""Typed settings of the question stage (the stage contract: ``spare_gen.runner.contract``): the fields every task
shares plus the task's own options section (``spare_gen.config.tasks``), and the unit fingerprint they make."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import NotRequired, TypeVar

from pydantic import SerializeAsAny

from spare_gen.config.base import TaskOptions
from spare_gen.config.schema import Config, QuestionsConfig, RenderConfig, TaskName
from spare_gen.config.tasks import TASK_OPTIONS, task_options
from spare_gen.runner.contract import StageSettings, Unit, fingerprint_of

OptionsT = TypeVar("OptionsT", bound=TaskOptions)


def stage_name(task: TaskName) -> str:
    return f"questions_{task.value}"


class Hashed(Enum):
    """Which tasks' unit fingerprints hash a ``questions`` option (``FINGERPRINT``)."""

    OWNER = "owner"  # the task whose section declares it (every option not in ``FINGERPRINT``)
    OWNER_UNLESS_DEFAULT = "owner_unless_default"  # the same, left out at its default (an option added later)
    EVERY_TASK = "every_task"  # every task's, whichever declares it
    NONE = "none"  # no unit's: the option acts on the client, before any unit runs


# What each task's unit fingerprint has hashed since before the tasks owned their options, declared here once so
# that an output finished then resumes as "nothing to do" (its ``.units`` fingerprints unchanged). Then one settings
# record held every task's knobs: the three-view-to-isometric cut options and the point count were in every question
# stage's fingerprint, whichever task it ran (changing one still redoes every task's units); the pose set in
# isometric_to_pose's only; the cutter box in three-view-to-isometric's only, and only when not the default tight
# box (the rule of every cut set made before the option existed); the symmetry filter in none (it picks the models on
# the client). An option not named here is hashed by its owner's units only.
FINGERPRINT: dict[str, Hashed] = {
    "max_cut_attempts": Hashed.EVERY_TASK,
    "cut_budget_s": Hashed.EVERY_TASK,
    "point_cloud_points": Hashed.EVERY_TASK,
    "cutters": Hashed.EVERY_TASK,
    "cutter_box": Hashed.OWNER_UNLESS_DEFAULT,
    "symmetry_filter": Hashed.NONE,
}


def hashed_options(task: TaskName, questions: QuestionsConfig) -> dict[str, object]:
    """The ``questions`` options (JSON values) ``task``'s unit fingerprint hashes (``FINGERPRINT``)."""
    hashed: dict[str, object] = {}
    for owner, section in TASK_OPTIONS.items():
        for name, info in section.model_fields.items():
            rule, value = FINGERPRINT.get(name, Hashed.OWNER), getattr(questions, name)
            if rule is Hashed.EVERY_TASK or (owner is task and rule is Hashed.OWNER) or \
                    (owner is task and rule is Hashed.OWNER_UNLESS_DEFAULT and value != info.default):
                hashed[name] = value.value if isinstance(value, Enum) else value
    return hashed


class QuestionSettings(StageSettings):
    """One task's per-model work: rules, the render section (fixed views only), the fill round and the task's own
    options (``options``, typed by the task: ``settings.own(Options)``).

    ``round`` counts: a model first tried in a later round is another unit of work (its replacement
    quota differs), so resume never mixes rounds. ``hashed`` holds the options the fingerprint hashes in place of
    ``options`` (``hashed_options``: the same ones it hashed before each task owned its options).
    """

    task: TaskName
    round: int = 1
    tolerance_px: float
    render: RenderConfig
    options: SerializeAsAny[TaskOptions]
    hashed: dict[str, object]

    def own(self, section: type[OptionsT]) -> OptionsT:
        """The task's options as its own section ``section`` (the task module's ``Options``)."""
        if not isinstance(self.options, section):
            raise TypeError(f"{self.stage}: options are {type(self.options).__qualname__}, not {section.__qualname__}")
        return self.options

    def fingerprint(self) -> str:
        """Hash of the common fields but where the output goes, and of the options ``hashed`` names (flat, as
        before each task owned its options)."""
        return fingerprint_of(self.model_dump(mode="json", exclude=set(self.PLACEMENT) | {"options", "hashed"})
                              | self.hashed)

    @classmethod
    def from_config(cls, config: Config, out: Path, task: TaskName, round_: int = 1) -> "QuestionSettings":
        q = config.questions
        render = config.render.model_copy(update={"random_views": 0})  # cut objects need the fixed views only
        return cls(stage=stage_name(task), seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, task=task, round=round_,
                   tolerance_px=q.duplicate_tolerance_px, render=render,
                   options=task_options(task, q), hashed=hashed_options(task, q))


class QuestionUnit(Unit):
    """One model's work for one task (its ``TaskSpec.run_unit``): the task and the model, then what the task's
    ``unit_inputs`` add: the B-rep (``shape_path``), the drawings' ``framing`` and ``hlr_method``
    (``shape_and_framing``, on the client), or the isometric drawings' polylines (``views``, on a worker)."""

    task: str
    model_id: str
    framing: NotRequired[dict]
    hlr_method: NotRequired[str]
    views: NotRequired[dict[str, dict]]
