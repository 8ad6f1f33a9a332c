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
    quota differs), so resume never mixes rounds. The variant settings (``UNUSED_WHEN_NONE``, e.g. ``pose_choices``)
    are None for every task whose spec does not read them (``TaskSpec.variant_settings``), and then not in the
    fingerprint: changing one redoes the units of the tasks that read it only. ``cutter_box`` is also None for the
    default tight box (the rule of every cut set made before the option existed), so earlier cut sets resume;
    ``cutter_box_rule`` reads it.
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
    def from_config(cls, config: Config, out: Path, task: TaskName, variant_settings: tuple[str, ...],
                    round_: int = 1) -> "QuestionSettings":
        """``variant_settings``: the ``questions`` fields of ``UNUSED_WHEN_NONE`` the task reads (its spec's; use
        ``spare_gen.stages.questions.tasks.question_settings``, which passes them)."""
        q = config.questions
        variants = {name: getattr(q, name) for name in cls.UNUSED_WHEN_NONE if name in variant_settings}
        if variants.get("cutter_box") is DEFAULT_CUTTER_BOX:
            variants["cutter_box"] = None
        render = config.render.model_copy(update={"random_views": 0})  # cut objects need the fixed views only
        return cls(stage=stage_name(task), seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, task=task, round=round_,
                   tolerance_px=q.duplicate_tolerance_px, max_cut_attempts=q.max_cut_attempts,
                   cut_budget_s=q.cut_budget_s,
                   point_cloud_points=q.point_cloud_points, cutters=q.cutters, render=render, **variants)
