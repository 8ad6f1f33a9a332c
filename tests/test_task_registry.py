"""The TaskSpec registry: every TaskName has a module, and each spec is consistent with its own columns."""

from __future__ import annotations

import pytest

from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.schema import ANSWER_COLUMN
from spare_gen.stages.questions.layout import AnswerSide
from spare_gen.stages.questions.tasks import question_schema
from spare_gen.stages.questions.spec import TargetKind
from spare_gen.stages.questions.tasks import TASK_SPECS


def test_every_task_has_a_spec_in_enum_order():
    assert list(TASK_SPECS) == list(TaskName)
    assert all(spec.name is task for task, spec in TASK_SPECS.items())


@pytest.mark.parametrize("task", list(TaskName), ids=lambda t: t.value)
def test_spec_names_only_its_own_columns(task):
    spec = TASK_SPECS[task]
    columns = set(question_schema(task).names)
    assert (ANSWER_COLUMN in columns) == (spec.n_answers > 0) == (spec.answer_side is not None)
    loader = spec.loader
    drawing_prefixes = [*loader.drawing.values(), *([loader.candidates] if loader.candidates else [])]
    if loader.target is TargetKind.DRAWING:
        drawing_prefixes.append(loader.target_column)
    for prefix in drawing_prefixes:
        assert {f"{prefix}_svg", f"{prefix}_png"} <= columns, prefix
    if loader.target is TargetKind.POINTS or loader.pose:
        assert {c for c in (loader.target_column, loader.pose) if c} <= columns
    if spec.answer_side is AnswerSide.CANDIDATES:
        assert spec.answer_side_prefix == loader.candidates
    if spec.answer_side is AnswerSide.CLASSES:
        assert spec.answer_side_prefix in loader.drawing.values()
    assert set(spec.content_named_columns) <= columns
    if spec.n_answers and task is not TaskName.THREE_VIEW_TO_ISOMETRIC:  # cut files are content-named at birth
        prefix = spec.answer_side_prefix
        assert {f"{prefix}_svg", f"{prefix}_png"} <= set(spec.content_named_columns)
