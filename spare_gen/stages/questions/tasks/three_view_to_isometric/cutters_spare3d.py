"""The original SPARE3D cutter family for three-view-to-isometric (``questions.cutters = "spare3d"``).

Written from the description of ``data_generation/boolean.py`` (``New_shp``) and ``Three2I.py``: one of box, sphere,
sharp cone or cylinder, equally likely, axis-aligned (cone and cylinder along Z, base at centre - h/2); its centre
uniform in the middle half of the model's bounding box along each axis; sizes from A = (X + Y + Z) / 5 of the box's
edge lengths: box edges U(A/2, A), sphere radius U(A/4, A/2), cone base radius U(A/4, A/2) and height U(A/2, A),
cylinder radius U(A/4, A/2) and height U(A/2, A). Acceptance is the original's: a cut is kept whatever it removes
(even nothing) unless its pose-2 drawing is pixel-identical to another candidate's (``Three2I_answer_filter.py``).
Specs use the CSG primitive format (primitives centred on the origin), so ``spare_gen.cad.cut.cut_with`` builds them.
"""

from __future__ import annotations

import numpy as np

from spare_gen.config.schema import Primitive
from spare_gen.stages.questions.rejections import QuestionRejection as Rejection

CENTER_SPREAD = 0.25  # centre = bbox centre + U(-0.25, 0.25) x extent, per axis
SIZE_DIVISOR = 5.0  # A = (X + Y + Z) / 5


SPARE3D_KINDS = (Primitive.BOX, Primitive.SPHERE, Primitive.CONE, Primitive.CYLINDER)  # drawn uniformly, in this order


def spare3d_cutter(bbox, rng: np.random.Generator) -> dict:
    """A CSG primitive spec (type, params, rotation, translation) following the original rule for ``bbox``."""
    lo, hi = np.asarray(bbox[:3], dtype=float), np.asarray(bbox[3:], dtype=float)
    ext = np.abs(hi - lo)
    a = float(ext.sum()) / SIZE_DIVISOR
    if not a > 0:
        raise ValueError(f"cannot place a cutter in an empty bounding box {tuple(bbox)!r}")
    kind = SPARE3D_KINDS[int(rng.integers(len(SPARE3D_KINDS)))]
    centre = (lo + hi) / 2.0 + rng.uniform(-CENTER_SPREAD, CENTER_SPREAD, size=3) * ext
    u = rng.uniform
    if kind is Primitive.BOX:
        params = {"dx": u(0.5 * a, a), "dy": u(0.5 * a, a), "dz": u(0.5 * a, a)}
    elif kind is Primitive.SPHERE:
        params = {"r": u(0.25 * a, 0.5 * a)}
    elif kind is Primitive.CONE:
        params = {"r1": u(0.25 * a, 0.5 * a), "r2": 0.0, "h": u(0.5 * a, a)}
    else:
        params = {"r": u(0.25 * a, 0.5 * a), "h": u(0.5 * a, a)}
    return {"type": kind.value, "params": {k: float(v) for k, v in params.items()},
            "rotation": {"axis": "z", "degrees": 0}, "translation": [float(v) for v in centre]}


def spare3d_cut_rule(cut) -> Rejection | None:
    """Only a cut that leaves nothing to draw is refused (the original kept misses and invalid results)."""
    return None if cut.has_faces else Rejection.CUT_EMPTY


def spare3d_drawing_rule(rows: dict, accepted: list[dict], target_view: str) -> Rejection | None:
    """Refuse a cut whose target-pose PNG is pixel-identical (same bytes: deterministic encoder) to an accepted one."""
    if all(r["n_visible"] + r["n_hidden"] == 0 for r in rows.values()):
        return Rejection.CUT_DRAW_FAILED
    mine = _pixels_key(rows[target_view])
    if any(mine == _pixels_key(other["views"][target_view]) for other in accepted):
        return Rejection.CUT_DUPLICATE
    return None


def _pixels_key(view: dict):
    """The PNG's hash (equal pixels give equal bytes), or the polylines when PNGs are off."""
    return view.get("png_sha256") or repr((view["visible"], view["hidden"]))
