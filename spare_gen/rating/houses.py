"""Vertex kinds of a house wireframe (z up): roof ridge, eave, or corner, read from the edges at each vertex.

An edge at a vertex is *sloped* when it is neither horizontal nor vertical (a rake, hip, valley or shed
roof edge), *vertical* when it is a wall or chimney corner line. A vertex is

* RIDGE: a sloped edge goes down from it, none goes up, and no vertical edge rises from it (ridge ends,
  a hip roof's apex, the ends of a dormer's ridge, a shed roof's high edge);
* EAVE: a sloped edge goes up from it, none goes down and nothing vertical rises from it (the foot of a
  roof slope on a wall), or it tops a wall above the ground with no sloped edge at all (a flat roof's
  corner);
* CORNER: anything else (ground corners, dormer corners on the roof) and every vertex of a chimney.
"""

from __future__ import annotations

import numpy as np

from spare_gen.wireframe import CORNER, EAVE, RIDGE

FLAT_SINE = 0.02  # an edge whose |dz| / length is below this is horizontal, above 1 - this vertical
CHIMNEY_TOLERANCE = 1e-6  # model units a chimney vertex may sit outside its box


def house_vertex_kinds(vertices: np.ndarray, edges: np.ndarray, house: dict) -> np.ndarray:
    """CORNER / RIDGE / EAVE per vertex of a house wireframe in model units (``house``: its JSON description)."""
    vertices = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    n = len(vertices)
    ground = vertices[:, 2].min() if n else 0.0
    both = np.vstack([edges, edges[:, ::-1]])  # every edge from each of its ends
    d = vertices[both[:, 1]] - vertices[both[:, 0]]
    length = np.linalg.norm(d, axis=1)
    sine = np.divide(d[:, 2], length, out=np.zeros_like(length), where=length > 0)
    sloped = (np.abs(sine) > FLAT_SINE) & (np.abs(sine) < 1 - FLAT_SINE)
    vertical = np.abs(sine) >= 1 - FLAT_SINE

    def any_at(mask: np.ndarray) -> np.ndarray:
        return np.bincount(both[mask, 0], minlength=n) > 0

    slope_up, slope_down = any_at(sloped & (sine > 0)), any_at(sloped & (sine < 0))
    rises, falls = any_at(vertical & (sine > 0)), any_at(vertical & (sine < 0))
    above_ground = vertices[:, 2] > ground + FLAT_SINE * np.ptp(vertices[:, 2]) if n else np.zeros(0, bool)
    kinds = np.full(n, CORNER, dtype=np.uint8)
    kinds[slope_down & ~slope_up & ~rises] = RIDGE
    kinds[slope_up & ~slope_down & ~rises] = EAVE
    kinds[~slope_up & ~slope_down & ~rises & falls & above_ground] = EAVE
    for chimney in house.get("chimneys", []):
        lo = np.array([chimney["x"][0], chimney["y"][0], chimney["z"][0]]) - CHIMNEY_TOLERANCE
        hi = np.array([chimney["x"][1], chimney["y"][1], chimney["z"][1]]) + CHIMNEY_TOLERANCE
        kinds[np.all((vertices >= lo) & (vertices <= hi), axis=1)] = CORNER
    return kinds
