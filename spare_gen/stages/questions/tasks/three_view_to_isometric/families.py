"""three_view_to_isometric: the cutter families, one row each (``questions.cutters`` picks one).

A row says everything the cut set does differently per family: how a cutter is drawn (``make_cutter``), which
boolean results are kept (``keep_cut``), when a cut's drawings duplicate or leave ambiguous an accepted one
(``duplicate_rule``), whether a cutter that cannot remove ``MIN_REMOVED`` of the model is refused before its
boolean (``refuse_unreachable``), and whether duplicates are pixel-identical PNGs only (``pixel_duplicates``: then
no vector drawing is kept between attempts, and the validator compares PNG bytes). The rules are cad-free (a
drawer is any object with ``view(name)`` and ``drawing(name)``), so the client, the validator and the child read the
same table. Which model box every family sizes and places its cutters in is the run's ``questions.cutter_box``
(``BoxRule``: the tight box by default, ``brep`` as the original generator), computed in the child
(``child.CUTTER_BOXES``).

Adding a family: a ``CutterFamily`` member (``spare_gen.config.tasks.three_view_to_isometric``) and its row below;
a cutter of its own (and rules) goes in a module here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from spare_gen.config.tasks.three_view_to_isometric import CutterFamily
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.tasks.three_view_to_isometric.cutters import (
    keep_cut, near_duplicate_rule, random_cutter,
)
from spare_gen.stages.questions.tasks.three_view_to_isometric.cutters_spare3d import (
    spare3d_cut_rule, spare3d_cutter, spare3d_drawing_rule,
)
from spare_gen.stages.questions.tasks.three_view_to_isometric.job import CUT_VIEWS, TARGET, CutJob


@dataclass(frozen=True)
class CutterRules:
    """One cutter family (see the module docstring)."""

    make_cutter: Callable[[tuple, np.random.Generator], dict]  # (model box, rng) -> CSG primitive spec
    keep_cut: Callable[[Any, float], QuestionRejection | None]  # (spare_gen.cad.cut.Cut, removed share)
    duplicate_rule: Callable[[Any, list[dict], CutJob], QuestionRejection | None]  # (drawer, accepted cuts, job)
    refuse_unreachable: bool
    pixel_duplicates: bool


def _pixel_rule(d, accepted: list[dict], job: CutJob) -> QuestionRejection | None:
    views = CUT_VIEWS if not accepted else (TARGET,)  # later cuts store their candidate only
    return spare3d_drawing_rule({v: d.view(v) for v in views}, accepted, TARGET)


def _spare3d_keep(cut, removed: float) -> QuestionRejection | None:
    return spare3d_cut_rule(cut)


CUTTER_FAMILIES: dict[CutterFamily, CutterRules] = {
    # sphere, box, cone (frustum), torus, rotated; misses, slivers, invalid results and near-duplicates refused
    CutterFamily.SPARE_GEN: CutterRules(make_cutter=random_cutter, keep_cut=keep_cut,
                                        duplicate_rule=near_duplicate_rule,
                                        refuse_unreachable=True, pixel_duplicates=False),
    # the original generator's: box, sphere, sharp cone, cylinder, axis-aligned; only empty or pixel-identical refused
    CutterFamily.SPARE3D: CutterRules(make_cutter=spare3d_cutter, keep_cut=_spare3d_keep, duplicate_rule=_pixel_rule,
                                      refuse_unreachable=False, pixel_duplicates=True),
}
