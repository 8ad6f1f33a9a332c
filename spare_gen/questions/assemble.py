"""Turn accepted models into question rows: row order, balanced answers (rule 1), candidate order.

Answer positions are pure presentation, so they are assigned here, after all rejections, exactly
balanced per task and split; the per-model work never depends on them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import numpy as np

from spare_gen.config.schema import TaskName
from spare_gen.questions.select import Stratum, balanced_choice, balanced_labels
from spare_gen.questions.symmetry import candidate_poses
from spare_gen.questions.tasks import ALL_POSES, FRONT, LAYOUTS, POSE_CHOICES, RIGHT, TARGET_POSE, TOP, pose_view
from spare_gen.rng import derive_rng, derive_seed


@dataclass
class Accepted:
    """A model that passed its task's rules, with the per-model result and its view files."""

    model_id: str
    stratum: Stratum
    result: dict  # the unit's result (cut set, pose matrix, points, ...)
    views: dict[str, dict]  # view -> {svg, png, png_sha256}


def _three_view_fields(views: dict[str, dict]) -> dict:
    return {f"{name}_{kind}": views[v][kind] for name, v in (("front", FRONT), ("right", RIGHT), ("top", TOP))
            for kind in ("svg", "png")}


def _arrange(correct, distractors: list, answer: int, rng: np.random.Generator) -> list:
    """Distractors in random order with the correct item inserted at position ``answer``."""
    order = [distractors[i] for i in rng.permutation(len(distractors))]
    return order[:answer] + [correct] + order[answer:]


def _three_view(seed: int, task: str, item: Accepted, answer: int, **_) -> dict:
    cuts = item.result["cuts"]  # cut 0 is the source of F, R, T and of the correct answer
    arranged = _arrange(cuts[0], cuts[1:], answer, derive_rng(seed, "questions", task, item.model_id, "order"))
    target = pose_view(TARGET_POSE)
    return {
        **_three_view_fields(cuts[0]["views"]),
        "candidate_svg": [c["views"][target]["svg"] for c in arranged],
        "candidate_png": [c["views"][target]["png"] for c in arranged],
        "answer": answer,
        "candidate_step": [c["step"] for c in arranged],
        "cutters": json.dumps([c["cutter"] for c in arranged], sort_keys=True),
    }


def _isometric_to_pose(seed: int, task: str, item: Accepted, answer: int, **_) -> dict:
    iso = item.views[pose_view(POSE_CHOICES[answer])]
    return {**_three_view_fields(item.views), "iso_svg": iso["svg"], "iso_png": iso["png"],
            "choice_poses": list(POSE_CHOICES), "answer": answer}


def _pose_to_isometric(seed: int, task: str, item: Accepted, answer: int, pose: int, **_) -> dict:
    rng = derive_rng(seed, "questions", task, item.model_id, "candidates")
    poses = candidate_poses(item.result["duplicates"], pose, rng)
    arranged = _arrange(poses[0], poses[1:], answer, rng)
    return {
        **_three_view_fields(item.views),
        "pose": pose,
        "candidate_svg": [item.views[pose_view(p)]["svg"] for p in arranged],
        "candidate_png": [item.views[pose_view(p)]["png"] for p in arranged],
        "answer": answer,
        "candidate_poses": arranged,
    }


def _isometric_view_generation(seed: int, task: str, item: Accepted, answer, **_) -> dict:
    target = item.views[pose_view(TARGET_POSE)]
    return {**_three_view_fields(item.views), "target_svg": target["svg"], "target_png": target["png"]}


def _point_cloud_generation(seed: int, task: str, item: Accepted, answer, **_) -> dict:
    points = item.result["points"]
    return {**_three_view_fields(item.views), "points": points, "n_points": len(points),
            "deflection": item.result["deflection"]}


BUILDERS: dict[TaskName, Callable[..., dict]] = {
    TaskName.THREE_VIEW_TO_ISOMETRIC: _three_view,
    TaskName.ISOMETRIC_TO_POSE: _isometric_to_pose,
    TaskName.POSE_TO_ISOMETRIC: _pose_to_isometric,
    TaskName.ISOMETRIC_VIEW_GENERATION: _isometric_view_generation,
    TaskName.POINT_CLOUD_GENERATION: _point_cloud_generation,
}


def assemble_split(seed: int, task: TaskName, split: str, items: list[Accepted]) -> list[dict]:
    """Rows of one task split: seeded row order, balanced answers (and balanced query poses)."""
    task = TaskName(task)
    items = sorted(items, key=lambda it: it.model_id)
    items = [items[i] for i in derive_rng(seed, "questions", task.value, split, "rows").permutation(len(items))]
    n_answers = LAYOUTS[task].n_answers
    answers = (balanced_labels(len(items), n_answers, derive_rng(seed, "questions", task.value, split, "answers"))
               if n_answers else [None] * len(items))
    poses = [None] * len(items)
    if task is TaskName.POSE_TO_ISOMETRIC:
        poses = balanced_choice([it.result["feasible_poses"] for it in items], ALL_POSES,
                                derive_rng(seed, "questions", task.value, split, "poses"))
    rows = []
    for i, (item, answer, pose) in enumerate(zip(items, answers, poses)):
        base = {
            "question_id": f"{task.value}-{split}-{i:05d}",
            "task": task.value,
            "split": split,
            "model_id": item.model_id,
            "n_primitives": item.stratum,
            "seed": derive_seed(seed, "questions", task.value, item.model_id),
        }
        rows.append({**base, **BUILDERS[task](seed, task.value, item, answer, pose=pose)})
    return rows
