"""Typed settings of the drawings stage (the stage contract: ``spare_gen.runner.contract``)."""

from __future__ import annotations

from pathlib import Path
from typing import NotRequired

from spare_gen.config.schema import Config, RenderConfig
from spare_gen.runner.contract import StageSettings, Unit
from spare_gen.stage_table import DRAWINGS


class DrawSettings(StageSettings):
    """The render section; ``timeout_s`` is the CPU budget of the mesh (fallback) algorithm, the exact one
    has ``render.exact_timeout_s``."""

    render: RenderConfig

    @classmethod
    def from_config(cls, config: Config, out: Path) -> "DrawSettings":
        return cls(stage=DRAWINGS.name, seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, render=config.render)


class DrawUnit(Unit):
    """One model to draw: its id and its BREP file (``shape_path``); ``skip_reason``: why it is not drawn."""

    model_id: str
    skip_reason: NotRequired[str]


class DrawAttempt(DrawUnit):
    """What the drawing child gets: the unit, with this attempt's HLR algorithm (``method``, an ``HlrMethod``
    value) and its curve and mesh tolerance as a factor of ``render.deflection``."""

    method: str
    deflection_factor: float
