"""Typed settings of the question stage (the stage contract: ``spare_gen.runner.contract``)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from spare_gen.config.schema import (
    BoxRule, Config, CutterFamily, PoseChoices, QuestionsConfig, RenderConfig, TaskName,
)
from spare_gen.runner.contract import StageSettings

DEFAULT_CUTTER_BOX: BoxRule = QuestionsConfig.model_fields["cutter_box"].default


def stage_name(task: TaskName) -> str:
    return f"questions_{task.value}"


class QuestionSettings(StageSettings):
    """One task's per-model work: rules, the render section (fixed views only) and the fill round.

    ``round`` counts: a model first tried in a later round is another unit of work (its replacement
    quota differs), so resume never mixes rounds. ``pose_choices`` is None for every task but isometric_to_pose, and
    then not in the fingerprint: changing it redoes that task's units only. ``cutter_box`` is None for every task but
    three_view_to_isometric and for the default tight box (the rule of every cut set made before the option
    existed), so earlier cut sets resume; ``cutter_box_rule`` reads it.
    """

    UNUSED_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"pose_choices", "cutter_box"})

    task: TaskName
    round: int = 1
    tolerance_px: float
    max_cut_attempts: int
    cut_budget_s: float
    point_cloud_points: int
    cutters: CutterFamily
    pose_choices: PoseChoices | None = None
    cutter_box: BoxRule | None = None
    render: RenderConfig

    @property
    def cutter_box_rule(self) -> BoxRule:
        return self.cutter_box or DEFAULT_CUTTER_BOX

    @classmethod
    def from_config(cls, config: Config, out: Path, task: TaskName, round_: int = 1) -> "QuestionSettings":
        q = config.questions
        render = config.render.model_copy(update={"random_views": 0})  # cut objects need the fixed views only
        return cls(stage=stage_name(task), seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, task=task, round=round_,
                   tolerance_px=q.duplicate_tolerance_px, max_cut_attempts=q.max_cut_attempts,
                   cut_budget_s=q.cut_budget_s,
                   point_cloud_points=q.point_cloud_points, cutters=q.cutters,
                   pose_choices=q.pose_choices if task is TaskName.ISOMETRIC_TO_POSE else None,
                   cutter_box=q.cutter_box if task is TaskName.THREE_VIEW_TO_ISOMETRIC
                   and q.cutter_box is not DEFAULT_CUTTER_BOX else None, render=render)
