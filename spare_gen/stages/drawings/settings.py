"""Typed settings of the drawings stage (the stage contract: ``spare_gen.runner.contract``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Mapping, NotRequired

from spare_gen.canvas.poses import FIXED_VIEWS
from spare_gen.config.schema import Config, RenderConfig
from spare_gen.runner.contract import StageSettings, Unit
from spare_gen.runner.isolation import Status
from spare_gen.runner.results import RowResult, Timings
from spare_gen.stage_table import DRAWINGS
from spare_gen.stages.drawings.schema import DrawingRow, failed_rows


@dataclass(frozen=True, kw_only=True)
class DrawResult(RowResult[DrawingRow]):
    """One model's drawings: its drawings.parquet row (``row``) and its views.parquet rows, as the table writer takes
    them (a view's row holds its polylines, and its files' bytes where the views are packed, which ``ViewRow`` does
    not declare). The stage is sharded: no unit file stores it."""

    ROW: ClassVar = DrawingRow
    views: list[dict[str, Any]]

    def record(self) -> dict[str, Any]:
        return {"status": self.status, "model": self.row.as_dict(), "views": self.views, "unit_id": self.unit_id}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "DrawResult":
        return cls(row=DrawingRow(**record["model"]), views=list(record["views"]))

    @classmethod
    def not_drawn(cls, model_id: str, status: Status, error: str, views: list[str], fallback_reason: str = "",
                  timings: Timings = Timings()) -> "DrawResult":
        """A model that was not drawn: its drawings row and one failed views row per expected view, with the
        reason."""
        model, rows = failed_rows(model_id, status, error, views, fallback_reason)
        return cls(row=model, views=rows, timings=timings)

    @classmethod
    def failure(cls, unit_id: str, status: Status, error: str) -> "DrawResult":
        """A model not drawn, with a failed row for each fixed view (the random views' names are the settings')."""
        return cls.not_drawn(unit_id, status, error, list(FIXED_VIEWS))


class DrawSettings(StageSettings):
    """The render section; ``timeout_s`` is the CPU budget of the mesh (fallback) algorithm, the exact one
    has ``render.exact_timeout_s``."""

    RESULT: ClassVar = DrawResult

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
