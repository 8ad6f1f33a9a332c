"""What the config's sections share: the section base, the task-options base and the box rule both render and a
task read. The lowest module of ``spare_gen.config``: it imports nothing of the package."""

from __future__ import annotations

from enum import Enum
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, model_serializer

EVERY_OPTION_KEY = "every_option"
EVERY_OPTION = {EVERY_OPTION_KEY: True}  # model_dump context: keep LATER_OPTIONS at their defaults too

# The largest integer a count or seed may be: what a 64-bit column (Arrow, numpy) holds. Counts the inputs cannot meet
# are refused below that when a run starts (spare_gen.stages.questions.assembly.plan.check_counts).
INT64_MAX = 2**63 - 1


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)  # finite floats only
    # Options added after datasets were made with the section: left out of the config's dumps (dataset.json, the
    # card, the stages' fingerprints) while at their default, so a dataset made before the option existed keeps its
    # bytes and resumes without rework; a dump with ``context=EVERY_OPTION`` (``spare-gen config``) keeps them.
    LATER_OPTIONS: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _omit_later_defaults(self, handler, info):
        data = handler(self)
        if not (info.context or {}).get(EVERY_OPTION_KEY):
            for name in self.LATER_OPTIONS:
                if getattr(self, name) == type(self).model_fields[name].default:
                    data.pop(name, None)
        return data


class TaskOptions(Section):
    """One task's own ``questions.*`` options (``spare_gen.config.tasks.<task>.Options``; this class for a task with
    none). Its keys sit flat in the ``[questions]`` table beside the common ones, so each name is unique across the
    tasks; the question stage hands a task's units its section (``QuestionSettings.options``). What a unit's
    fingerprint hashes of them is ``FINGERPRINT`` in ``spare_gen.stages.questions.settings``.
    """

    # the options ``questions/summary.json`` records (the validator reads them back from there), under their own names
    RECORDED_IN_SUMMARY: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def check_config(cls, config) -> None:
        """Cross-section rule of the task's options (``config``: the whole ``Config``); raise ValueError."""


class BoxRule(str, Enum):
    """Which 3D box of a model sizes its drawing (``render.preset``) or its cutters (``questions.cutter_box``)."""

    TIGHT = "tight"  # the exact box
    # OCCT's B-rep box (BRepBndLib::Add, no triangulation, gap 1e-6), the original SPARE3D's: control-point and
    # tolerance bounds, loose on tori, cones and curved intersections
    BREP = "brep"
