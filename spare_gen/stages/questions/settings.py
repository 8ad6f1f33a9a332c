"""Typed settings of the question stage (the stage contract: ``spare_gen.runner.contract``): the fields every task
shares plus the task's own options section (``spare_gen.config.tasks``), and the unit fingerprint they make."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Mapping, NotRequired, TypeVar

from pydantic import SerializeAsAny

from spare_gen.config.base import TaskOptions
from spare_gen.config.schema import Config, QuestionsConfig, RenderConfig, TaskName
from spare_gen.config.tasks import TASK_OPTIONS, task_options
from spare_gen.runner.contract import StageSettings, Unit, fingerprint_of
from spare_gen.runner.isolation import Status
from spare_gen.runner.results import Timed, Timings

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


DECISION = ("rule", "error", "attempt_rejections")  # what of a result's ``own`` part the fill decides and counts on


@dataclass(frozen=True, kw_only=True)
class QuestionResult(Timed):
    """One model's unit of a question task: whether the task accepts the model, and the task's own part of the result
    (``own``), keyed as the task states it: the rule that rejected the model and why (``rule``, ``error``), the
    candidates' rejections by rule (``attempt_rejections``), and what only the task's row builder reads (a cut set,
    poses, points). The fill reads the decision through the properties; only the task's module reads the rest.

    ``status`` is ok unless the runner failed the unit (``failure``); its record is ``model_id``, ``accepted`` and
    ``own``'s keys as the task stated them (a task that states ``rule: null`` keeps it), the keys the unit files
    have always had."""

    model_id: str
    accepted: bool
    own: Mapping[str, Any] = field(default_factory=dict)
    status: str = Status.OK.value

    @property
    def unit_id(self) -> str:
        return self.model_id

    @property
    def error(self) -> str:
        return self.own.get("error") or ""

    @property
    def rule(self) -> str | None:
        """The rule that rejected the model (a ``QuestionRejection`` value); None when accepted."""
        return self.own.get("rule")

    @property
    def attempt_rejections(self) -> Mapping[str, int]:
        return self.own.get("attempt_rejections") or {}

    @classmethod
    def stated(cls, model_id: str, value: Mapping[str, Any], timings: Timings) -> "QuestionResult":
        """The result a task's check states as ``{"accepted": ..., **its own part}``."""
        own = dict(value)
        return cls(model_id=model_id, accepted=bool(own.pop("accepted")), own=own, timings=timings)

    def decision(self) -> "QuestionResult":
        """What the fill needs of this result (``DECISION``) and its timings, without the task's own bulk: a unit's
        reply to the client (``run_stage(..., reply=QuestionResult.decision)``, applied on the worker; the split
        writer reads the whole result from the unit file)."""
        return dataclasses.replace(self, own={k: v for k, v in self.own.items() if k in DECISION})

    def record(self) -> dict[str, Any]:
        status = {} if self.status == Status.OK.value else {"status": self.status}
        return {"model_id": self.model_id, "accepted": self.accepted, **self.own, **status, "unit_id": self.unit_id}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "QuestionResult":
        own = {k: v for k, v in record.items() if k not in ("model_id", "accepted", "status", "unit_id")}
        return cls(model_id=record.get("model_id") or record["unit_id"], accepted=bool(record.get("accepted")),
                   own=own, status=record.get("status") or Status.OK.value)

    @classmethod
    def failure(cls, unit_id: str, status: Status, error: str) -> "QuestionResult":
        return cls(model_id=unit_id, accepted=False, own={"error": error}, status=status.value)


class QuestionSettings(StageSettings):
    """One task's per-model work: rules, the render section (fixed views only), the fill round and the task's own
    options (``options``, typed by the task: ``settings.own(Options)``).

    ``round`` counts: a model first tried in a later round is another unit of work (its replacement
    quota differs), so resume never mixes rounds. ``hashed`` holds the options the fingerprint hashes in place of
    ``options`` (``hashed_options``: the same ones it hashed before each task owned its options).
    """

    RESULT: ClassVar = QuestionResult

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
