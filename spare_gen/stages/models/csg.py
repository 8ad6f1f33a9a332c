"""Seeded CSG programs as in SPARE3D-CSG: 2-4 primitives, 90-degree rotations about X/Y/Z, booleans.

A program is plain JSON (``{"primitives": [...], "operations": [...]}``) built as a left fold
((p0 op0 p1) op1 p2)...; ``spare_gen.cad.build_csg`` turns it into a solid. Values are rounded to
0.01 so the JSON is short and rebuilds exactly.
"""

from __future__ import annotations

import math
from enum import Enum

import numpy as np

from spare_gen.config.schema import ROTATION_AXES, Primitive


class Operation(str, Enum):
    UNION = "union"
    DIFFERENCE = "difference"
    INTERSECTION = "intersection"


ROTATION_DEGREES = (0, 90, 180, 270)

# Parameter ranges (uniform, model units) for primitives of a model about one unit across.
PARAM_RANGES: dict[Primitive, dict[str, tuple[float, float]]] = {
    Primitive.BOX: {"dx": (0.4, 1.0), "dy": (0.4, 1.0), "dz": (0.4, 1.0)},
    Primitive.SPHERE: {"r": (0.25, 0.5)},
    Primitive.CYLINDER: {"r": (0.15, 0.4), "h": (0.4, 1.0)},
    Primitive.CONE: {"r1": (0.2, 0.5), "r2": (0.0, 0.2), "h": (0.4, 1.0)},
    Primitive.TORUS: {"R": (0.25, 0.45), "r": (0.08, 0.16)},
}
TRANSLATION_RANGE = (-0.3, 0.3)
# Weights of the boolean operations (intersections of random parts are often tiny or empty).
OPERATION_WEIGHTS = {Operation.UNION: 0.4, Operation.DIFFERENCE: 0.4, Operation.INTERSECTION: 0.2}


def _r(x: float) -> float:
    return round(float(x), 2)


def random_primitive(rng: np.random.Generator) -> dict:
    kind = list(Primitive)[int(rng.integers(len(Primitive)))]
    params = {name: _r(rng.uniform(lo, hi)) for name, (lo, hi) in PARAM_RANGES[kind].items()}
    return {
        "type": kind.value,
        "params": params,
        "rotation": {
            "axis": list(ROTATION_AXES)[int(rng.integers(len(ROTATION_AXES)))],
            "degrees": ROTATION_DEGREES[int(rng.integers(4))],
        },
        "translation": [_r(v) for v in rng.uniform(*TRANSLATION_RANGE, size=3)],
    }


def random_program(n_primitives: int, rng: np.random.Generator) -> dict:
    """A random CSG program with ``n_primitives`` primitives and ``n_primitives - 1`` operations."""
    if n_primitives < 1:
        raise ValueError(f"n_primitives must be >= 1 (got {n_primitives})")
    ops = list(OPERATION_WEIGHTS)
    weights = np.array(list(OPERATION_WEIGHTS.values()))
    return {
        "primitives": [random_primitive(rng) for _ in range(n_primitives)],
        "operations": [ops[int(i)].value for i in rng.choice(len(ops), size=n_primitives - 1, p=weights / weights.sum())],
    }


def primitive_volume(spec: dict) -> float:
    """Analytic volume of one primitive (rotation and translation keep it)."""
    p = spec["params"]
    kind = Primitive(spec["type"])
    if kind is Primitive.BOX:
        return p["dx"] * p["dy"] * p["dz"]
    if kind is Primitive.SPHERE:
        return 4.0 / 3.0 * math.pi * p["r"] ** 3
    if kind is Primitive.CYLINDER:
        return math.pi * p["r"] ** 2 * p["h"]
    if kind is Primitive.CONE:
        return math.pi * p["h"] * (p["r1"] ** 2 + p["r1"] * p["r2"] + p["r2"] ** 2) / 3.0
    return 2.0 * math.pi**2 * p["R"] * p["r"] ** 2


def primitives_volume(program: dict) -> float:
    return float(sum(primitive_volume(s) for s in program["primitives"]))


def primitive_counts_for(count: int, choices: list[int]) -> list[int]:
    """Primitive count of each model index: equal shares, interleaved (index i gets choices[i % k])."""
    return [choices[i % len(choices)] for i in range(count)]
