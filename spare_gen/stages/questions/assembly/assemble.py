"""Turn accepted models into question rows: row order, balanced answers (rule 1); each task builds its columns.

Answer positions are pure presentation, so they are assigned here, after all rejections, exactly
balanced per task and split; the per-model work never depends on them.
"""

from __future__ import annotations

from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.row_parts import Accepted
from spare_gen.stages.questions.schema import QuestionCommon
from spare_gen.stages.questions.select import balanced_labels
from spare_gen.stages.questions.tasks import TASK_SPECS
from spare_gen.rng import derive_rng, derive_seed


def row_plan(seed: int, task: TaskName, split: str, items: list[Accepted], n_answers: int
             ) -> list[tuple[int, object, dict]]:
    """A split's rows as (index into ``items``, answer, build_row extras), in row order: seeded order, answers
    balanced over 0..``n_answers`` - 1 (the run's variant's; None for a generation task), and balanced query poses
    (``split_extras`` needs the items' whole results)."""
    task = TaskName(task)
    order = sorted(range(len(items)), key=lambda i: items[i].model_id)
    order = [order[i] for i in derive_rng(seed, "questions", task.value, split, "rows").permutation(len(items))]
    spec = TASK_SPECS[task]
    answers = (balanced_labels(len(items), n_answers, derive_rng(seed, "questions", task.value, split, "answers"))
               if n_answers else [None] * len(items))
    extras = spec.split_extras(seed, split, [items[i] for i in order]) if spec.split_extras else [{}] * len(items)
    return list(zip(order, answers, extras))


def build_rows(seed: int, task: TaskName, split: str, start: int, items: list[Accepted], answers: list,
               extras: list[dict]) -> list[QuestionCommon]:
    """Rows ``start``, ``start + 1``, ... of one task split from their items, answers and extras (``row_plan``), as
    the task's row class: a column ``build_row`` names that the row does not declare is a TypeError here."""
    task = TaskName(task)
    spec = TASK_SPECS[task]
    rows = []
    for i, (item, answer, extra) in enumerate(zip(items, answers, extras), start):
        base = QuestionCommon(question_id=f"{task.value}-{split}-{i:05d}", task=task.value, split=split,
                              model_id=item.model_id, n_primitives=item.stratum,
                              seed=derive_seed(seed, "questions", task.value, item.model_id))
        rows.append(spec.row(**{**base.as_dict(), **spec.build_row(seed, item, answer, **extra)}))
    return rows
