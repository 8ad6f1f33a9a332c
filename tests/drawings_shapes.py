"""Purpose-built test models for the drawing tests, as CSG programs (built with spare_gen.cad, no OCP here)."""

from __future__ import annotations

import copy
from pathlib import Path

from spare_gen import cad
from spare_gen.config.schema import RenderConfig


def box(dx, dy, dz, at=(0.0, 0.0, 0.0)) -> dict:
    return {"type": "box", "params": {"dx": dx, "dy": dy, "dz": dz}, "translation": list(at)}


def prim(kind: str, params: dict, axis: str = "z", degrees: float = 0, at=(0.0, 0.0, 0.0)) -> dict:
    return {"type": kind, "params": params, "rotation": {"axis": axis, "degrees": degrees}, "translation": list(at)}


def program(primitives: list[dict], operations: list[str] | None = None) -> dict:
    return {"primitives": primitives, "operations": operations or []}


# An L-shaped block [0,4] x [0,2] x [0,3] (the upper right quarter of the XZ profile removed) with a
# notch cut from its front-top-left corner: no symmetry, so every pose gives a different drawing.
L_BLOCK = program(
    [box(4, 2, 3, (2, 1, 1.5)), box(2.5, 3, 2, (3.25, 1, 2.5)), box(1, 1, 1, (0, 0, 3))],
    ["difference", "difference"],
)
L_BLOCK_VERTICES = [
    (0, 0, 0), (4, 0, 0), (4, 0, 1.5), (2, 0, 1.5), (2, 0, 3), (0.5, 0, 3), (0.5, 0, 2.5), (0, 0, 2.5),
    (0, 2, 0), (4, 2, 0), (4, 2, 1.5), (2, 2, 1.5), (2, 2, 3), (0, 2, 3),
    (0.5, 0.5, 3), (0.5, 0.5, 2.5), (0, 0.5, 2.5), (0, 0.5, 3),
]
L_BLOCK_BBOX = (0.0, 0.0, 0.0, 4.0, 2.0, 3.0)

BOX = program([box(2, 1, 1.5)])
# a 2 x 2 x 2 cube with a radius-0.4 hole along Y (cylinder axis z rotated 90 degrees about x)
HOLED_BOX = program([box(2, 2, 2), prim("cylinder", {"r": 0.4, "h": 3}, "x", 90)], ["difference"])
# a needle along Y: seen end-on from the front, its F drawing is a dot
NEEDLE = program([prim("cylinder", {"r": 0.01, "h": 10}, "x", 90)])
# two disjoint boxes intersected: an empty shape, nothing to draw
EMPTY = program([box(1, 1, 1), box(1, 1, 1, (5, 0, 0))], ["intersection"])


def scaled(prog: dict, factor: float) -> dict:
    """The same program with every length multiplied by ``factor``."""
    out = copy.deepcopy(prog)
    for p in out["primitives"]:
        p["params"] = {k: v * factor for k, v in p["params"].items()}
        p["translation"] = [v * factor for v in p.get("translation", (0, 0, 0))]
    return out


def write_model(prog: dict, folder: Path, name: str) -> str:
    """Build the program and write it as BREP; return the absolute path (what draw_model reads)."""
    path = Path(folder) / f"{name}.brep"
    cad.write_brep(cad.build_csg(prog), path)
    return str(path.resolve())


def render_config(**overrides) -> RenderConfig:
    return RenderConfig(**overrides)
