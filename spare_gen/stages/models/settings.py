"""Typed settings of the model stage (the stage contract: ``spare_gen.runner.contract``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, NotRequired

from pydantic import Field

from spare_gen.config.schema import Config, CsgConfig, HousesConfig
from spare_gen.runner.contract import StageSettings, Unit
from spare_gen.runner.results import RowResult
from spare_gen.stages.models.schema import ModelRow
from spare_gen.stage_table import MODELS


@dataclass(frozen=True, kw_only=True)
class ModelResult(RowResult[ModelRow]):
    """One model's result: its models.parquet row (the model stage is sharded: no unit file stores it)."""

    ROW: ClassVar = ModelRow


class ModelSettings(StageSettings):
    """The seed and CPU budget, the CSG rules and the house family (a files source reads the unit's file only)."""

    RESULT: ClassVar = ModelResult

    csg: CsgConfig
    houses: HousesConfig = Field(default_factory=HousesConfig)

    @classmethod
    def from_config(cls, config: Config, out: Path) -> "ModelSettings":
        return cls(stage=MODELS.name, seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, csg=config.models.csg,
                   houses=config.models.houses)


class ModelUnit(Unit):
    """One model to make or load: its id and source (``csg``, ``houses`` or ``file``), then the source's own keys: a
    CSG model's ``index`` and ``n_primitives``; a house's ``index``, ``footprint`` and ``roof``; a file's
    ``source_path`` (as listed, made absolute: a link keeps its own name), ``sha256`` and ``skip_reason``, and
    ``error`` where listing its folder found that it cannot be a model."""

    model_id: str
    source: str
    index: NotRequired[int]
    n_primitives: NotRequired[int]
    footprint: NotRequired[str]
    roof: NotRequired[str]
    source_path: NotRequired[str]
    sha256: NotRequired[str]
    skip_reason: NotRequired[str]
    error: NotRequired[str]
