"""Seeded procedural houses: rectangular, L and T footprints; gable, hip, flat and shed roofs; dormers; chimneys.

A house is plain JSON (the ``house`` column of models.parquet), z up, model units of about one storey:

    {"footprint": "l", "roof": "gable",
     "blocks":   [{"x": [x0, x1], "y": [y0, y1], "wall": h, "rise": r, "ridge": "x" | "y"}, ...],
     "dormers":  [{"x": [..], "y": [..], "z": [z_base, z_wall_top], "rise": r, "ridge": "x" | "y"}, ...],
     "chimneys": [{"x": [..], "y": [..], "z": [z0, z1]}, ...]}

Block 0 is the main house (its ridge along x); L and T footprints add a wing (block 1, ridge along y) that
starts at the main ridge line and reaches out past the back wall, so the wing's inner end is buried in
the main roof and the roofs meet in valleys. Every block, dormer and chimney is a convex polyhedron
(:func:`convex_parts` gives their corner points); the house solid is their union
(``spare_gen.cad.build_house``). A shed roof rises towards the block's far side across its ridge axis
(its high edge is the "ridge"). Values are rounded to 0.01 so the JSON is short and rebuilds exactly.
"""

from __future__ import annotations

import numpy as np

from spare_gen.config.schema import Footprint, HousesConfig, RoofType

# Sizes (uniform ranges, model units) of the main block and its roof, as a fraction of the block's width.
MAIN_LENGTH = (1.2, 1.8)
MAIN_WIDTH = (0.7, 1.0)
WALL_HEIGHT = (0.45, 0.75)
PITCH = (0.45, 0.9)  # roof rise per unit of horizontal run (gable and hip: run = half the width)
SHED_PITCH = (0.2, 0.4)  # run = the whole width
DORMER_ROOF_PITCH = (0.9, 1.2)  # a roof with dormers is steeper (room for them under the ridge)
DORMER_SHED_PITCH = (0.4, 0.5)
WING_WIDTH = (0.45, 0.75)  # fraction of the main block's width
WING_REACH = (0.35, 0.75)  # how far the wing reaches past the main block's back wall (model units)
DORMER_WIDTH = (0.2, 0.3)
DORMER_WALL = (0.06, 0.1)  # dormer wall height above the roof at its front
DORMER_PITCH = (0.5, 0.9)
CHIMNEY_SIDE = (0.1, 0.16)
CHIMNEY_CLEARANCE = (0.08, 0.2)  # chimney top above the main ridge (flat roof: above the roof)
MARGIN = 0.05  # model units kept between a dormer or chimney and a roof's edges


def _r(x: float) -> float:
    return round(float(x), 2)


def _block(x: tuple[float, float], y: tuple[float, float], wall: float, rise: float, ridge: str) -> dict:
    return {"x": [_r(x[0]), _r(x[1])], "y": [_r(y[0]), _r(y[1])], "wall": _r(wall), "rise": _r(rise), "ridge": ridge}


def _run(roof: RoofType, block: dict) -> float:
    """Horizontal run of a block's roof slope (across its ridge axis)."""
    across = block["y"] if block["ridge"] == "x" else block["x"]
    width = across[1] - across[0]
    return width if roof is RoofType.SHED else width / 2.0


def _blocks(footprint: Footprint, roof: RoofType, rng: np.random.Generator, steep: bool) -> list[dict]:
    """The main block and, for L and T footprints, its wing; ``steep``: the pitch range of a roof with dormers."""
    length, width = rng.uniform(*MAIN_LENGTH), rng.uniform(*MAIN_WIDTH)
    wall = rng.uniform(*WALL_HEIGHT)
    if roof is RoofType.SHED:
        pitch = rng.uniform(*(DORMER_SHED_PITCH if steep else SHED_PITCH))
    else:
        pitch = rng.uniform(*(DORMER_ROOF_PITCH if steep else PITCH))
    run = width if roof is RoofType.SHED else width / 2.0
    rise = 0.0 if roof is RoofType.FLAT else pitch * run
    main = _block((0.0, length), (0.0, width), wall, rise, "x")
    if footprint is Footprint.RECT:
        return [main]
    wing_w = _r(rng.uniform(*WING_WIDTH) * main["y"][1])
    reach = rng.uniform(*WING_REACH)
    if footprint is Footprint.L:
        x0 = main["x"][1] - wing_w
    else:  # T: the wing somewhere along the middle of the back wall
        x0 = rng.uniform(0.4, 0.6) * main["x"][1] - wing_w / 2.0
    wing_run = wing_w if roof is RoofType.SHED else wing_w / 2.0
    wing_rise = 0.0 if roof is RoofType.FLAT else pitch * wing_run
    if roof is RoofType.SHED:  # keep the wing's inner end under the main roof's mid height
        wing_rise = min(wing_rise, 0.45 * main["rise"])
    wing = _block((x0, x0 + wing_w), (main["y"][1] / 2.0, main["y"][1] + reach), main["wall"], wing_rise, "y")
    return [main, wing]


def roof_height(roof: RoofType, block: dict, y: float) -> float:
    """Height of the main block's roof (ridge along x) above the line at ``y`` on its front slope."""
    y0 = block["y"][0]
    return block["wall"] + block["rise"] * (y - y0) / _run(roof, block)


def _dormers(roof: RoofType, main: dict, rng: np.random.Generator, count: int) -> list[dict]:
    """Up to ``count`` gable dormers side by side on the main block's front slope (the y0 side), or none."""
    if roof is RoofType.FLAT or count == 0:
        return []
    y0, run = main["y"][0], _run(roof, main)
    width = _r(rng.uniform(*DORMER_WIDTH))
    front = _r(y0 + rng.uniform(0.2, 0.35) * run)
    base = _r(roof_height(roof, main, front) - MARGIN)  # below the roof: the dormer grows out of it
    top = _r(roof_height(roof, main, front) + rng.uniform(*DORMER_WALL))
    rise = _r(rng.uniform(*DORMER_PITCH) * width / 2.0)
    # the back end reaches where the main roof is above the dormer's ridge, so it is buried in the roof
    back = _r(y0 + (top + rise + MARGIN / 2 - main["wall"]) * run / main["rise"])
    limit = y0 + run - MARGIN if roof is not RoofType.SHED else main["y"][1] - MARGIN
    if back > limit:
        return []
    inset = (back - y0 + MARGIN) if roof is RoofType.HIP else 2 * MARGIN  # clear of the hip faces
    lo, hi = main["x"][0] + inset, main["x"][1] - inset
    gap = 2 * MARGIN
    count = min(count, int((hi - lo + gap) // (width + gap)))
    if count <= 0:
        return []
    span = count * width + (count - 1) * gap
    start = lo + rng.uniform(0.0, hi - lo - span)
    lefts = [_r(start + i * (width + gap)) for i in range(count)]
    return [{"x": [x0, _r(x0 + width)], "y": [front, back], "z": [base, top], "rise": rise, "ridge": "y"}
            for x0 in lefts]


def _chimney(main: dict, rng: np.random.Generator) -> dict:
    """One chimney through the main block's back half, its top above the main ridge (a flat roof: above the roof)."""
    side = rng.uniform(*CHIMNEY_SIDE)
    x0 = rng.uniform(main["x"][0] + 2 * MARGIN, main["x"][1] - 2 * MARGIN - side)
    mid = (main["y"][0] + main["y"][1]) / 2.0
    y0 = rng.uniform(mid + MARGIN, main["y"][1] - 2 * MARGIN - side)  # the back half: dormers are on the front
    top = main["wall"] + main["rise"] + rng.uniform(*CHIMNEY_CLEARANCE)
    return {"x": [_r(x0), _r(x0 + side)], "y": [_r(y0), _r(y0 + side)], "z": [_r(main["wall"] - 2 * MARGIN), _r(top)]}


def random_house(footprint: Footprint, roof: RoofType, rng: np.random.Generator, houses: HousesConfig) -> dict:
    """A random house of this footprint and roof type; dormers and chimneys with the configured probabilities."""
    dormer_count = int(rng.integers(1, 3)) if rng.random() < houses.dormer_probability else 0
    blocks = _blocks(footprint, roof, rng, steep=dormer_count > 0 and roof is not RoofType.FLAT)
    chimney = rng.random() < houses.chimney_probability
    return {
        "footprint": footprint.value,
        "roof": roof.value,
        "blocks": blocks,
        "dormers": _dormers(roof, blocks[0], rng, dormer_count),
        "chimneys": [_chimney(blocks[0], rng)] if chimney else [],
    }


def _box(x, y, z) -> list[list[float]]:
    return [[a, b, c] for a in x for b in y for c in z]


def _gable_top(x, y, z_top: float, rise: float, ridge: str, hip: float = 0.0) -> list[list[float]]:
    """The two ends of a ridge ``rise`` above ``z_top``, along ``ridge``, ``hip`` in from each end."""
    if ridge == "x":
        yc = (y[0] + y[1]) / 2.0
        return [[x[0] + hip, yc, z_top + rise], [x[1] - hip, yc, z_top + rise]]
    xc = (x[0] + x[1]) / 2.0
    return [[xc, y[0] + hip, z_top + rise], [xc, y[1] - hip, z_top + rise]]


def block_points(roof: RoofType, block: dict) -> list[list[float]]:
    """Corner points of one block: walls from the ground to ``wall``, then its roof."""
    x, y, h, rise, ridge = block["x"], block["y"], block["wall"], block["rise"], block["ridge"]
    walls = _box(x, y, (0.0, h))
    if roof is RoofType.FLAT or rise <= 0:
        return walls
    if roof is RoofType.GABLE:
        return walls + _gable_top(x, y, h, rise, ridge)
    if roof is RoofType.HIP:
        along, across = (x, y) if ridge == "x" else (y, x)
        hip = min((across[1] - across[0]) / 2.0, (along[1] - along[0]) / 2.0)
        return walls + _gable_top(x, y, h, rise, ridge, hip)
    # shed: the far side across the ridge axis is raised by ``rise``
    if ridge == "x":
        return walls + [[x[0], y[1], h + rise], [x[1], y[1], h + rise]]
    return walls + [[x[1], y[0], h + rise], [x[1], y[1], h + rise]]


def convex_parts(house: dict) -> list[np.ndarray]:
    """The corner points (N, 3) of every convex part (blocks, dormers, chimneys); the house is their union."""
    roof = RoofType(house["roof"])
    parts = [block_points(roof, b) for b in house["blocks"]]
    parts += [_box(d["x"], d["y"], d["z"]) + _gable_top(d["x"], d["y"], d["z"][1], d["rise"], d["ridge"])
              for d in house["dormers"]]
    parts += [_box(c["x"], c["y"], c["z"]) for c in house["chimneys"]]
    return [np.unique(np.asarray(p, dtype=np.float64), axis=0) for p in parts]


def house_plan(count: int, footprints: list[Footprint], roofs: list[RoofType]) -> list[tuple[Footprint, RoofType]]:
    """Footprint and roof of each model index: every roof in turn, then the next footprint (all pairs covered)."""
    return [(footprints[(i // len(roofs)) % len(footprints)], roofs[i % len(roofs)]) for i in range(count)]
