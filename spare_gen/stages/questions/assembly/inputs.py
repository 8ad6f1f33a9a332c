"""Read what the model and drawing stages produced: usable models (rule 4), their strata and their views; and
what each task's per-model unit reads (``TaskSpec.unit_inputs``), added to the units before they are sent."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from spare_gen.store import shards
from spare_gen.canvas.poses import FIXED_VIEWS, ISOMETRIC_VIEWS
from spare_gen.rows import rows_from_table
from spare_gen.stages.drawings.schema import DRAWINGS_FILE, VIEWS_FILE, DrawingRow, ViewRow
from spare_gen.stages.models.schema import MODELS_FILE, ModelRow
from spare_gen.stages.models.quality import Quality
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.settings import QuestionUnit
from spare_gen.stages.questions.select import Stratum
from spare_gen.stages.questions.spec import UnitInput
from spare_gen.runner.isolation import Status

VIEW_COLUMNS = ["model_id", "view", "status", "svg", "png", "png_sha256"]
POLYLINE_COLUMNS = ["model_id", "view", "visible", "hidden", "png_sha256"]
# what load_inputs reads of drawings.parquet: the flags and the framing
DRAWING_COLUMNS = ["model_id", "status", "hlr_method", "scale", "center", "blank", "tiny", "duplicate", "usable"]
FLAGGED_CAD_RULE = "flagged_cad"  # the model stage's quality gate (invalid B-rep, disjoint solids)


@dataclass
class Inputs:
    """Usable models with their stratum, B-rep path and view files; what was filtered out, by rule."""

    strata: dict[str, Stratum] = field(default_factory=dict)  # model_id -> n_primitives (None for files)
    brep: dict[str, str] = field(default_factory=dict)  # model_id -> path relative to the dataset root
    views: dict[str, dict[str, dict]] = field(default_factory=dict)  # model_id -> view -> {svg, png, png_sha256}
    framing: dict[str, dict] = field(default_factory=dict)  # model_id -> {framing: {scale, center}, hlr_method}
    filtered: Counter = field(default_factory=Counter)  # Rejection value -> models

    def by_stratum(self) -> dict[Stratum, list[str]]:
        out: dict[Stratum, list[str]] = {}
        for mid, s in sorted(self.strata.items()):
            out.setdefault(s, []).append(mid)
        return out


def _flag_rule(row: DrawingRow) -> QuestionRejection | None:
    if row.status != Status.OK:
        return QuestionRejection.NOT_DRAWN
    if row.blank:
        return QuestionRejection.BLANK
    if row.tiny:
        return QuestionRejection.TINY
    if row.duplicate:
        return QuestionRejection.DUPLICATE_MODEL
    if not row.usable:
        return QuestionRejection.NOT_DRAWN
    return None


class MissingViews(ValueError):
    """The drawings in the output folder lack views the tasks asked for read (drawn for other tasks)."""


def load_inputs(out: Path, allow_flagged_cad: bool = False, needed: tuple[str, ...] = FIXED_VIEWS) -> Inputs:
    """Models drawn without a blank, tiny or duplicate flag and with the fixed views ``needed`` ok (the views the
    asked tasks read: ``tasks.drawn_views``; all 11 by default).

    Models the CAD quality gate flagged (``quality`` other than ok) are left out unless ``allow_flagged_cad``.
    Raises MissingViews when the drawings hold no row of some needed view (made for tasks that do not read it).
    """
    columns = ["model_id", "status", "n_primitives", "brep_path"]
    has_quality = "quality" in shards.schema(out / MODELS_FILE).names
    models = {str(r.model_id): r for r in rows_from_table(ModelRow, shards.read(
        out / MODELS_FILE, columns=columns + (["quality"] if has_quality else [])))}
    drawings = rows_from_table(DrawingRow, shards.read(out / DRAWINGS_FILE, columns=DRAWING_COLUMNS))
    views: dict[str, dict[str, ViewRow]] = {}
    for v in rows_from_table(ViewRow, shards.read(out / VIEWS_FILE, columns=VIEW_COLUMNS)):
        if v.view in FIXED_VIEWS:
            views.setdefault(str(v.model_id), {})[str(v.view)] = v
    drawn_views = {name for model_views in views.values() for name in model_views}
    absent = [v for v in needed if v not in drawn_views]
    if views and absent:
        raise MissingViews(f"questions: {out / VIEWS_FILE} holds no drawing of view(s) {', '.join(absent)}, which the "
                           f"tasks asked for read (the drawings were made for tasks that do not); run the drawings "
                           f"stage again with these settings (spare-gen run --stages drawings,questions)")
    inputs = Inputs()
    drawn = set()
    for row in drawings:
        mid = str(row.model_id)
        drawn.add(mid)
        rule = _flag_rule(row)
        model_views = views.get(mid, {})
        if rule is None and (mid not in models or any(
                _view_status(model_views.get(v)) != Status.OK for v in needed)):
            rule = QuestionRejection.NOT_DRAWN
        if rule is not None:
            inputs.filtered[rule.value] += 1
            continue
        model = models[mid]
        if not allow_flagged_cad and model.quality not in (None, Quality.OK.value):
            inputs.filtered[FLAGGED_CAD_RULE] += 1
            continue
        inputs.strata[mid] = model.n_primitives
        inputs.brep[mid] = str(model.brep_path)  # every drawn model has its B-rep
        inputs.framing[mid] = {"framing": {"scale": row.scale, "center": list(row.center or [])},
                               # "mixed": HlrModel falls back per view by itself; "poly": exact timed out
                               "hlr_method": "poly" if row.hlr_method == "poly" else "exact"}
        inputs.views[mid] = {k: {"svg": v.svg, "png": v.png, "png_sha256": v.png_sha256}
                             for k, v in model_views.items()}
    inputs.filtered[QuestionRejection.NOT_DRAWN.value] += sum(1 for m in models if m not in drawn)
    if not inputs.filtered[QuestionRejection.NOT_DRAWN.value]:
        del inputs.filtered[QuestionRejection.NOT_DRAWN.value]
    return inputs


def _view_status(view: ViewRow | None) -> Status | None:
    return None if view is None else view.status


def load_polylines(out: Path, model_ids: list[str], views: tuple[str, ...]) -> dict[str, dict[str, dict]]:
    """model_id -> view -> {visible, hidden, png_sha256} for the given models and views."""
    if not model_ids:
        return {}
    table = shards.read(out / VIEWS_FILE, columns=POLYLINE_COLUMNS,
                        filters=[("model_id", "in", list(model_ids)), ("view", "in", list(views))])
    result: dict[str, dict[str, dict]] = {}
    for r in rows_from_table(ViewRow, table):
        result.setdefault(str(r.model_id), {})[str(r.view)] = {
            "visible": r.visible, "hidden": r.hidden, "png_sha256": r.png_sha256}
    return result


def with_isometric_polylines(units: list[QuestionUnit], out_dir: str) -> list[QuestionUnit]:
    """Runs on a Dask worker: the units with ``views``, the model's isometric drawings as polylines (the pose
    tasks' symmetry checks), read from ``views.parquet`` (``runner.stage.Expand``)."""
    polylines = load_polylines(Path(out_dir), [u["model_id"] for u in units], ISOMETRIC_VIEWS)
    return [{**u, "views": polylines.get(u["model_id"], {})} for u in units]


def shape_and_framing(units: list[QuestionUnit], inputs: Inputs, out: Path) -> None:
    """``shape_path`` (absolute B-rep path), ``framing`` and ``hlr_method`` of the model (work in the child)."""
    for u in units:
        u["shape_path"] = str((out / inputs.brep[u["model_id"]]).resolve())
        drawn = inputs.framing[u["model_id"]]
        u["framing"], u["hlr_method"] = drawn["framing"], drawn["hlr_method"]


# small inputs, added by the client from what it has read anyway; large ones, read on the workers
CLIENT_INPUTS = {UnitInput.SHAPE_AND_FRAMING: shape_and_framing}
WORKER_INPUTS = {UnitInput.ISOMETRIC_POLYLINES: with_isometric_polylines}


def add_unit_inputs(kind: UnitInput, units: list[QuestionUnit], inputs: Inputs, out: Path) -> None:
    """Add what ``kind`` names to each unit, if the client adds it (``CLIENT_INPUTS``)."""
    if kind in CLIENT_INPUTS:
        CLIENT_INPUTS[kind](units, inputs, out)
