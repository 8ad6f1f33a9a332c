"""three_view_to_isometric's options: the cutter family (``cutters``), the model box cutters are sized from
(``cutter_box``), and how long and how often a cut set tries.

Adding a cutter family: a ``CutterFamily`` member here and its row in the task's family table
(``spare_gen.stages.questions.tasks.three_view_to_isometric.families.CUTTER_FAMILIES``).
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, ClassVar

from pydantic import Field

from spare_gen.config.base import BoxRule, TaskOptions


class CutterFamily(str, Enum):
    """Cutting primitives for three-view-to-isometric."""

    SPARE_GEN = "spare_gen"  # sphere, box, cone (frustum), torus; rotated; misses and near-duplicates rejected
    SPARE3D = "spare3d"  # the original boolean.py: box, sphere, sharp cone, cylinder; axis-aligned; A=(X+Y+Z)/5


class Options(TaskOptions):
    LATER_OPTIONS: ClassVar[frozenset[str]] = frozenset({"cutter_box"})
    RECORDED_IN_SUMMARY: ClassVar[tuple[str, ...]] = ("cutters",)

    max_cut_attempts: Annotated[int, Field(ge=1, le=1000)] = 12
    cut_budget_s: Annotated[float, Field(gt=0, le=3600)] = Field(
        5.0, description="CPU-time budget (s) of each boolean and each view's hidden-line removal in a "
        "three-view-to-isometric cut set; a step over it rejects that cutter (cut_boolean_over_budget, "
        "cut_hlr_over_budget) and the next one is tried (CPU, not wall time: results must not depend on load)",
    )
    cutters: CutterFamily = Field(
        CutterFamily.SPARE_GEN,
        description="spare3d: the original generator's cutters, kept unless two candidate PNGs are pixel-identical",
    )
    cutter_box: BoxRule = Field(
        BoxRule.TIGHT,
        description="the 3D box three-view-to-isometric's cutters are sized and placed from: tight (the exact box) "
                    "or brep (OCCT's B-rep box, BRepBndLib::Add without triangulation, as the original generator's "
                    "boolean.py; looser on curved models, so cutters grow and move out with it)",
    )
