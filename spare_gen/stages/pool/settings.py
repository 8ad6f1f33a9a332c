"""Typed settings of the pool stages (the stage contract: ``spare_gen.runner.contract``)."""

from __future__ import annotations

from pathlib import Path
from typing import NotRequired

from spare_gen.config.schema import Config, HouseWireframe, PredictionUnits
from spare_gen.runner.contract import StageSettings, Unit
from spare_gen.stages.pool.schema import METRIC_COLUMNS

WIREFRAMES_STAGE = "wireframes"
CORRUPTIONS_STAGE = "corruptions"


class WireframeSettings(StageSettings):
    """Ground-truth extraction: the curved-edge discretisation tolerance, and which edges of a house count."""

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
