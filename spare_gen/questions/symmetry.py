"""Pose-task checks (rule 3): reject models whose drawings from different candidate poses coincide.

Pure functions of a model's isometric view polylines; the results travel as JSON (unit files).
"""

from __future__ import annotations

import numpy as np

from spare_gen.questions.candidates import Drawing, distinct_triples, duplicate_matrix
from spare_gen.questions.layout import ALL_POSES, POSE_CHOICES, pose_view
from spare_gen.questions.rejections import QuestionRejection


def _drawings(views: dict[str, dict], poses: tuple[int, ...]) -> list[Drawing]:
    missing = [p for p in poses if pose_view(p) not in views]
    if missing:
        raise ValueError(f"model has no drawing for isometric pose(s) {missing}")
    return [Drawing.from_view(views[pose_view(p)]) for p in poses]


def check_isometric_to_pose(views: dict[str, dict], tolerance_px: float) -> dict:
    """Accept when the drawings from poses 1, 2, 5 and 6 are pairwise distinct."""
    dup = duplicate_matrix(_drawings(views, POSE_CHOICES), tolerance_px)
    pairs = [[POSE_CHOICES[i], POSE_CHOICES[j]] for i, j in zip(*np.nonzero(np.triu(dup)))]
    return {"accepted": not pairs, "rule": QuestionRejection.POSES_COINCIDE.value if pairs else None,
            "coinciding": pairs}


def check_pose_to_isometric(views: dict[str, dict], tolerance_px: float) -> dict:
    """Accept when some query pose has 3 other poses whose drawings are distinct from it and each other.

    Returns the 8x8 near-duplicate matrix (poses 1..8) and the feasible query poses, from which the
    driver picks a balanced query pose and the candidate poses.
    """
    dup = duplicate_matrix(_drawings(views, ALL_POSES), tolerance_px)
    feasible = [p for i, p in enumerate(ALL_POSES) if distinct_triples(dup, i)]
    return {
        "accepted": bool(feasible),
        "rule": None if feasible else QuestionRejection.NO_DISTINCT_POSES.value,
        "duplicates": dup.astype(int).tolist(),
        "feasible_poses": feasible,
    }


def candidate_poses(duplicates: list[list[int]], query: int, rng: np.random.Generator) -> list[int]:
    """The query pose and 3 distractor poses (a random distinct triple), query first."""
    dup = np.asarray(duplicates, dtype=bool)
    q = ALL_POSES.index(query)
    triples = distinct_triples(dup, q)
    if not triples:
        raise ValueError(f"pose {query} has no 3 distinct other poses for this model")
    chosen = triples[int(rng.integers(len(triples)))]
    return [query] + [ALL_POSES[i] for i in chosen]
