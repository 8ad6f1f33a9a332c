"""Typed settings of the model stage (the stage contract: ``spare_gen.runner.contract``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from spare_gen.config.schema import Config, CsgConfig, HousesConfig
from spare_gen.runner.contract import StageSettings
from spare_gen.stage_table import MODELS


class ModelSettings(StageSettings):
    """The seed and CPU budget, the CSG rules and the house family (a files source reads the unit's file only)."""

    csg: CsgConfig
    houses: HousesConfig = Field(default_factory=HousesConfig)

    @classmethod
    def from_config(cls, config: Config, out: Path) -> "ModelSettings":
        return cls(stage=MODELS.name, seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, csg=config.models.csg,
                   houses=config.models.houses)
