"""Random cutting primitives for cut objects: sphere, box, cone or torus near the model's centre.

Sizes are relative to the model's bounding box, rotations are 90-degree steps about X, Y or Z (the
SPARE3D-CSG style), and the spec has the CSG primitive format, so ``spare_gen.cad.cut.cut_with``
builds it with the same code as the models.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from spare_gen.models.csg import ROTATION_AXES, ROTATION_DEGREES


class CutterKind(str, Enum):
    SPHERE = "sphere"
    BOX = "box"
    CONE = "cone"
    TORUS = "torus"


CENTER_JITTER = 0.25  # cutter centre = bbox centre + uniform(-j, j) x bbox extent, per axis
MIN_EXTENT_FRACTION = 0.2  # flat models: treat each axis as at least this share of the largest extent


def _extents(bbox) -> tuple[np.ndarray, np.ndarray, float]:
    lo, hi = np.asarray(bbox[:3], dtype=float), np.asarray(bbox[3:], dtype=float)
    ext = np.maximum(hi - lo, 0.0)
    size = float(ext.max())
    if not size > 0:
        raise ValueError(f"cannot place a cutter in an empty bounding box {tuple(bbox)!r}")
    return (lo + hi) / 2.0, np.maximum(ext, MIN_EXTENT_FRACTION * size), size


def _params(kind: CutterKind, ext: np.ndarray, size: float, rng: np.random.Generator) -> dict[str, float]:
    u = rng.uniform
    if kind is CutterKind.SPHERE:
        return {"r": u(0.2, 0.45) * size}
    if kind is CutterKind.BOX:
        dx, dy, dz = (u(0.3, 0.8) * e for e in ext)
        return {"dx": dx, "dy": dy, "dz": dz}
    if kind is CutterKind.CONE:
        r1 = u(0.2, 0.45) * size
        return {"r1": r1, "r2": u(0.0, 0.5) * r1, "h": u(0.5, 1.2) * size}
    big = u(0.2, 0.4) * size
    return {"R": big, "r": u(0.25, 0.6) * big}


def random_cutter(bbox, rng: np.random.Generator) -> dict:
    """A CSG primitive spec (type, params, rotation, translation) sized and placed for ``bbox``."""
    center, ext, size = _extents(bbox)
    kind = list(CutterKind)[int(rng.integers(len(CutterKind)))]
    params = {k: float(v) for k, v in _params(kind, ext, size, rng).items()}
    rotation = {"axis": ROTATION_AXES[int(rng.integers(3))], "degrees": ROTATION_DEGREES[int(rng.integers(4))]}
    translation = center + rng.uniform(-CENTER_JITTER, CENTER_JITTER, size=3) * ext
    return {"type": kind.value, "params": params, "rotation": rotation,
            "translation": [float(v) for v in translation]}
