"""Typed settings of the drawings stage (the stage contract: ``spare_gen.runner.contract``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Mapping, NotRequired

from spare_gen.canvas.poses import FIXED_VIEWS, THREE_VIEWS
from spare_gen.config.schema import Config, RenderConfig
from spare_gen.runner.contract import StageSettings, Unit, fingerprint_of
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
    has ``render.exact_timeout_s``. ``views``: the fixed views to draw (None: all 11), the ones the tasks a run asks
    for read (``spare_gen.stages.questions.tasks.drawn_views``); it counts in the fingerprint only when it is not
    None, so drawings of every view keep their fingerprint and a change of the set redraws the models."""

    RESULT: ClassVar = DrawResult

    render: RenderConfig
    views: tuple[str, ...] | None = None

    @classmethod
    def from_config(cls, config: Config, out: Path, views: tuple[str, ...] = FIXED_VIEWS) -> "DrawSettings":
        unknown = [v for v in views if v not in FIXED_VIEWS]
        if unknown:
            raise ValueError(f"drawings: unknown view(s) {unknown} to draw; choose from {', '.join(FIXED_VIEWS)}")
        if not set(THREE_VIEWS) <= set(views):
            raise ValueError(f"drawings: views {list(views)} leave out F, R or T, which the framing reads")
        subset = tuple(v for v in FIXED_VIEWS if v in views)
        return cls(stage=DRAWINGS.name, seed=config.seed, out_dir=str(Path(out).resolve()),
                   timeout_s=config.runner.timeout_s, render=config.render,
                   views=None if subset == FIXED_VIEWS else subset)

    def fixed_views(self) -> tuple[str, ...]:
        """The fixed views drawn, in ``FIXED_VIEWS`` order."""
        return FIXED_VIEWS if self.views is None else self.views

    def fingerprint(self) -> str:
        """Hash of every field but where the output goes (and ``views`` when every view is drawn)."""
        exclude = set(self.PLACEMENT) | ({"views"} if self.views is None else set())
        return fingerprint_of(self.model_dump(mode="json", exclude=exclude))


class DrawUnit(Unit):
    """One model to draw: its id and its BREP file (``shape_path``); ``skip_reason``: why it is not drawn."""

    model_id: str
    skip_reason: NotRequired[str]


class DrawAttempt(DrawUnit):
    """What the drawing child gets: the unit, with this attempt's HLR algorithm (``method``, an ``HlrMethod``
    value) and its curve and mesh tolerance as a factor of ``render.deflection``."""

    method: str
    deflection_factor: float
