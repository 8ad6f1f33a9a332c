"""Typed settings of the pool stages (the stage contract: ``spare_gen.runner.contract``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping, NotRequired

from spare_gen.config.schema import Config, HouseWireframe, PredictionUnits
from spare_gen.runner.contract import StageSettings, Unit
from spare_gen.runner.isolation import Status
from spare_gen.runner.results import RowResult, Timed
from spare_gen.stages.pool.schema import METRIC_COLUMNS, WireframeRow

WIREFRAMES_STAGE = "wireframes"
CORRUPTIONS_STAGE = "corruptions"


@dataclass(frozen=True, kw_only=True)
class WireframeResult(RowResult[WireframeRow]):
    """One ground truth's result: its wireframes.parquet row; its record is the row's columns and ``unit_id``."""

    ROW: ClassVar = WireframeRow


@dataclass(frozen=True, kw_only=True)
class CorruptionsResult(Timed):
    """One ground truth's corruptions: its corruptions.parquet rows, as the table writer takes them (their metric
    columns are the metric registry's), and the status of the unit as a whole."""

    model_id: str
    status: str = Status.OK.value
    error: str = ""
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def unit_id(self) -> str:
        return self.model_id

    def record(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "status": self.status, "error": self.error, "rows": self.rows,
                "unit_id": self.unit_id}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "CorruptionsResult":
        return cls(model_id=record.get("model_id") or record["unit_id"], status=record["status"],
                   error=record.get("error") or "", rows=list(record.get("rows", [])))

    @classmethod
    def failure(cls, unit_id: str, status: Status, error: str) -> "CorruptionsResult":
        return cls(model_id=unit_id, status=status.value, error=error)


class WireframeSettings(StageSettings):
    """Ground-truth extraction: the curved-edge discretisation tolerance, and which edges of a house count."""

    RESULT: ClassVar = WireframeResult

    deflection: float
    house_wireframe: HouseWireframe

    @classmethod
    def from_config(cls, config: Config, out: Path) -> "WireframeSettings":
        return cls(stage=WIREFRAMES_STAGE, seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, deflection=config.pool.deflection,
                   house_wireframe=config.pool.house_wireframe)


class CorruptionSettings(StageSettings):
    """Variants, scores and pictures; ``predictions`` (``method/model_id`` -> content hash of each imported
    prediction file) makes a changed prediction file rerun its model, and ``metrics`` (the score columns, the metric
    registry's) makes a metric added to the registry rerun the corruptions, so an earlier pool gains its column."""

    RESULT: ClassVar = CorruptionsResult

    corner_threshold: float
    edge_threshold: float
    image_size: int
    prediction_units: PredictionUnits
    predictions: dict[str, str]
    metrics: tuple[str, ...] = METRIC_COLUMNS

    @classmethod
    def from_config(cls, config: Config, out: Path, predictions: dict[str, str]) -> "CorruptionSettings":
        pool = config.pool
        return cls(stage=CORRUPTIONS_STAGE, seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, corner_threshold=pool.corner_threshold,
                   edge_threshold=pool.edge_threshold, image_size=pool.image_size,
                   prediction_units=pool.prediction_units, predictions=predictions)


class WireframeUnit(Unit):
    """One ground truth to extract: the model and its BREP file (``shape_path``); ``house``: a procedural house's
    description (JSON), for its vertex kinds."""

    model_id: str
    house: NotRequired[str]


class CorruptionUnit(Unit):
    """One ground truth's corruptions: its wireframe (``gt``: the wireframes row's graph columns) and the
    predictions imported for it (``pool.predictions``)."""

    model_id: str
    gt: dict
    predictions: list
