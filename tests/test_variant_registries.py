"""Variants are registries: every cutter family, primitive kind, HLR method and corruption is declared once, and each
table that serves it has its row (a new member without one fails here, not in a run)."""

from __future__ import annotations

import numpy as np
import pytest

from spare_gen.cad import hlr
from spare_gen.cad.build import PRIMITIVES, CsgError, make_primitive, place
from spare_gen.config.base import BoxRule
from spare_gen.config.schema import ROTATION_AXES, HlrMethod, Primitive
from spare_gen.config.tasks.three_view_to_isometric import CutterFamily
from spare_gen.stages.models.csg import PARAM_RANGES, random_program
from spare_gen.rating.calibration import SCORES
from spare_gen.rating.corruptions import KIND_COLOURS, TARGETED_METRIC, CorruptionKind, TargetedMetric
from spare_gen.stages.questions.tasks.three_view_to_isometric.child import CUTTER_BOXES
from spare_gen.stages.questions.tasks.three_view_to_isometric.families import CUTTER_FAMILIES
from spare_gen.rng import derive_rng

UNIT_BOX = (-0.5, -0.4, -0.3, 0.5, 0.4, 0.3)


def test_every_cutter_family_has_one_row_and_every_box_rule_a_box():
    assert set(CUTTER_FAMILIES) == set(CutterFamily)
    assert set(CUTTER_BOXES) == set(BoxRule)


@pytest.mark.parametrize("family", list(CutterFamily))
def test_each_family_draws_buildable_primitives_about_the_declared_axes(family):
    rng = derive_rng(0, "test", family.value)
    cutters = [CUTTER_FAMILIES[family].make_cutter(UNIT_BOX, rng) for _ in range(200)]
    assert {c["type"] for c in cutters} <= {p.value for p in Primitive}
    assert {c["rotation"]["axis"] for c in cutters} <= set(ROTATION_AXES)
    for c in cutters[:8]:
        make_primitive(c["type"], c["params"])  # the builder knows every kind a family draws


def test_the_generator_and_the_builder_share_one_primitive_enum_and_one_axis_table():
    assert set(PRIMITIVES) == set(PARAM_RANGES) == set(Primitive)
    program = random_program(4, derive_rng(0, "test", "csg"))
    assert {p["rotation"]["axis"] for p in program["primitives"]} <= set(ROTATION_AXES)
    with pytest.raises(CsgError, match="choose from box, sphere, cylinder, cone, torus"):
        make_primitive("pyramid", {})
    with pytest.raises(CsgError, match="choose from x, y, z"):
        place(make_primitive("sphere", {"r": 1.0}), "w", 90, (0, 0, 0))


def test_one_hlr_method_enum_and_the_model_refuses_auto():
    assert hlr.HlrMethod is HlrMethod
    with pytest.raises(ValueError, match="one algorithm"):
        hlr.HlrModel(make_primitive("box", {"dx": 1.0, "dy": 1.0, "dz": 1.0}), HlrMethod.AUTO)


def test_every_corruption_registers_its_targeted_metric_and_colour():
    assert set(TARGETED_METRIC) == set(KIND_COLOURS) == set(CorruptionKind)
    assert set(SCORES) == set(TargetedMetric)
    colours = list(KIND_COLOURS.values())
    assert len(set(colours)) == len(colours) and all(np.shape(c) == (3,) for c in colours)
