"""The spare_gen cutter family: random cutting primitives (sphere, box, cone or torus near the model's centre), and
its rules (``families.CUTTER_FAMILIES``).

Sizes are relative to the model's bounding box, rotations are 90-degree steps about X, Y or Z (the
SPARE3D-CSG style), and the spec has the CSG primitive format, so ``spare_gen.cad.cut.cut_with``
builds it with the same code as the models. A cut is kept when it removes between ``MIN_REMOVED`` and
``MAX_REMOVED`` of the volume and is valid; its drawings must differ from every accepted cut's beyond the
near-duplicate tolerance.
"""

from __future__ import annotations

import numpy as np

from spare_gen.config.schema import ROTATION_AXES, Primitive
from spare_gen.stages.models.csg import ROTATION_DEGREES
from spare_gen.stages.questions.near_duplicate import near_duplicate
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.tasks.three_view_to_isometric.job import (
    MAX_REMOVED, MIN_REMOVED, SOURCE_VIEWS, TARGET, CutJob,
)


CUTTER_KINDS = (Primitive.SPHERE, Primitive.BOX, Primitive.CONE, Primitive.TORUS)  # drawn uniformly, in this order


CENTER_JITTER = 0.25  # cutter centre = bbox centre + uniform(-j, j) x bbox extent, per axis
MIN_EXTENT_FRACTION = 0.2  # flat models: treat each axis as at least this share of the largest extent


def _extents(bbox) -> tuple[np.ndarray, np.ndarray, float]:
    lo, hi = np.asarray(bbox[:3], dtype=float), np.asarray(bbox[3:], dtype=float)
    ext = np.maximum(hi - lo, 0.0)
    size = float(ext.max())
    if not size > 0:
        raise ValueError(f"cannot place a cutter in an empty bounding box {tuple(bbox)!r}")
    return (lo + hi) / 2.0, np.maximum(ext, MIN_EXTENT_FRACTION * size), size


def _params(kind: Primitive, ext: np.ndarray, size: float, rng: np.random.Generator) -> dict[str, float]:
    u = rng.uniform
    if kind is Primitive.SPHERE:
        return {"r": u(0.2, 0.45) * size}
    if kind is Primitive.BOX:
        dx, dy, dz = (u(0.3, 0.8) * e for e in ext)
        return {"dx": dx, "dy": dy, "dz": dz}
    if kind is Primitive.CONE:
        r1 = u(0.2, 0.45) * size
        return {"r1": r1, "r2": u(0.0, 0.5) * r1, "h": u(0.5, 1.2) * size}
    big = u(0.2, 0.4) * size
    return {"R": big, "r": u(0.25, 0.6) * big}


def random_cutter(bbox, rng: np.random.Generator) -> dict:
    """A CSG primitive spec (type, params, rotation, translation) sized and placed for ``bbox``."""
    center, ext, size = _extents(bbox)
    kind = CUTTER_KINDS[int(rng.integers(len(CUTTER_KINDS)))]
    params = {k: float(v) for k, v in _params(kind, ext, size, rng).items()}
    rotation = {"axis": list(ROTATION_AXES)[int(rng.integers(len(ROTATION_AXES)))],
                "degrees": ROTATION_DEGREES[int(rng.integers(4))]}
    translation = center + rng.uniform(-CENTER_JITTER, CENTER_JITTER, size=3) * ext
    return {"type": kind.value, "params": params, "rotation": rotation,
            "translation": [float(v) for v in translation]}


def keep_cut(cut, removed: float) -> QuestionRejection | None:
    """``cut``: a spare_gen.cad.cut.Cut; ``removed``: share of the model's volume it took away."""
    if not cut.has_faces or removed > MAX_REMOVED:
        return QuestionRejection.CUT_EMPTY
    if removed < MIN_REMOVED:
        return QuestionRejection.CUT_MISSED
    if not cut.valid:
        return QuestionRejection.CUT_INVALID
    return None


def _blank_or_tiny(row: dict, min_extent: float) -> bool:
    return row["n_visible"] + row["n_hidden"] == 0 or row["extent"] < min_extent


def near_duplicate_rule(d, accepted: list[dict], job: CutJob) -> QuestionRejection | None:
    """Pose 2 first (blank/tiny, duplicate); then cut 0's stored F, R, T, or for later cuts the ambiguity rule."""
    if _blank_or_tiny(d.view(TARGET), job.min_extent):
        return QuestionRejection.CUT_DRAW_FAILED
    if any(near_duplicate(d.drawing(TARGET), other["drawings"][TARGET], job.tolerance_px) for other in accepted):
        return QuestionRejection.CUT_DUPLICATE
    if not accepted:
        return QuestionRejection.CUT_DRAW_FAILED if any(
            _blank_or_tiny(d.view(v), job.min_extent) for v in SOURCE_VIEWS) else None
    if all(near_duplicate(d.drawing(v), accepted[0]["drawings"][v], job.tolerance_px) for v in SOURCE_VIEWS):
        return QuestionRejection.CUT_AMBIGUOUS  # lazily: stops drawing at the first view that differs
    return None
