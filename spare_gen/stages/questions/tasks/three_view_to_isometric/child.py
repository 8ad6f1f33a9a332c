"""three_view_to_isometric, child side: four distinct cut objects of one model, drawn like the model.

Runs in the isolated child. Cut ``k`` tries cutters from derive_rng(seed, "questions", task, model_id,
"cut", k, attempt) until one passes every rule (at most ``max_attempts``). Cut 0 is the source of the
question's F, R, T and of the correct answer (the four cutters are exchangeable, so this equals a
random choice; the answer position is assigned later, balanced). Every cut object is drawn with the
original model's framing (scale and centre) through the drawing stage's own HLR and renderer, so the
four candidates and the three views share one scale and nothing but geometry tells them apart. The
accepted files are then named by their content (``questions.schema.content_name``): no path says which cut
is 0.

Cost per attempt, cheapest test first: a cutter that cannot remove ``MIN_REMOVED`` of the volume (its own
volume, or the overlap of its box with the model's box, is too small) is refused before any boolean; the
pose-2 drawing (every cut's candidate) is drawn first and tested for duplicates before anything else; F, R
and T are drawn for cut 0 only (the only ones stored); for cuts 1-3 the ambiguity rule draws F, then R, then
T only while each is the same as cut 0's. (So the blank/tiny rule covers the stored drawings only.) Drawings are
made in memory; only an accepted cut's stored views (cut 0's F, R, T and every cut's candidate) and its STEP are
written, straight to their content names.

Per-step budget (``questions.cut_budget_s``): the attempts run in a forked copy of this child
(``spare_gen.runner.budget.BudgetedCopy``: one long-lived copy per child process, a fresh one after a kill) that
reports each step (the boolean with its checks, each view's hidden-line removal, the STEP write); the copy is
killed when one step has used more than the budget. The attempt is then rejected (``cut_boolean_over_budget`` /
``cut_hlr_over_budget``, listed with its CPU seconds under ``over_budget`` in the result) and the next cutter is
tried; after ``MAX_OVER_BUDGET`` such attempts the model is given up (``cut_too_slow``). CPU time, not wall time,
so the verdict does not depend on machine load (only a step within a few per cent of the budget could go either
way; typical steps take 0.01-0.3 s against a default of 5 s). An operation-count budget would be exact, but OCP 8
binds Message_ProgressIndicator without an overridable constructor (no Python ``UserBreak``) and exact HLR takes no
progress range at all. The fork also turns a crash inside one boolean into a rejected attempt. The copy's CPU time
is charged to the cut set here (``unit_budget_s``): the executor above sees only this process's own.

The copy holds the set (``_CutSet``: job, model, accepted cuts with their drawings) between attempts: the set
crosses the pipe once (or a copy forked during it inherits it), each attempt sends only its cutter and gets back
its rule or the accepted cut's record.
"""

from __future__ import annotations

import dataclasses
import resource
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import numpy as np

from spare_gen import cad
from spare_gen.atomic import write_bytes
from spare_gen.cad.cut import cut_with, removable_volume, removed_fraction
from spare_gen.cad.hlr import HlrModel
from spare_gen.cad.props import bounding_box, brep_bounding_box, volume
from spare_gen.config.base import BoxRule
from spare_gen.config.schema import RenderConfig
from spare_gen.config.tasks.three_view_to_isometric import Options
from spare_gen.canvas.poses import Framing, pose
from spare_gen.stages.drawings.preset import drawing_rule
from spare_gen.stages.drawings.render import Style, render_view
from spare_gen.store.packed import PNG_IMAGE, SVG_TEXT
from spare_gen.stages.questions.layout import N_CANDIDATES
from spare_gen.stages.questions.near_duplicate import Drawing
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.schema import content_name, settle
from spare_gen.stages.questions.settings import QuestionSettings, QuestionUnit
from spare_gen.stages.questions.tasks.three_view_to_isometric.families import CUTTER_FAMILIES
from spare_gen.stages.questions.tasks.three_view_to_isometric.job import (
    CUT_TIMEOUT_FACTOR, CUT_VIEWS, MAX_OVER_BUDGET, MIN_REMOVED, SLOW_BOOLEAN_HOOK, TARGET, TASK, CutJob,
    staged_cut_dir,
)
from spare_gen.rng import derive_rng
from spare_gen.runner import testhooks
from spare_gen.runner.budget import BudgetedCopy, CallOutcome, CallStatus

_BOOLEAN, _HLR, _WRITE = "boolean", "hlr", "write"
CUTTER_BOXES = {BoxRule.TIGHT: bounding_box, BoxRule.BREP: brep_bounding_box}  # questions.cutter_box


def _add(timings: dict[str, float], part: str, seconds: float) -> None:
    """Add ``seconds`` to ``part`` of CPU seconds by part (a part starts at 0)."""
    timings[part] = timings.get(part, 0) + seconds


class _Drawer:
    """Draws views of one cut object on demand (the model's framing), each view's HLR its own budget step."""

    def __init__(self, shape, name: str, render: RenderConfig, framing: dict, method: str, timings: dict[str, float],
                 mark: Callable[[str], None]):
        self.shape, self.name, self.method = shape, name, method
        # drawn in memory (the bytes in the row); only an accepted cut's stored views become files
        scale = float(framing["scale"])  # the model's: cut objects are drawn at its scale and line widths
        self.style = dataclasses.replace(Style.from_render(render, scale), packed=True)
        self.rule = drawing_rule(render)
        self.deflection = render.deflection
        cx, cy, cz = (float(v) for v in framing["center"])
        self.frame = Framing(self.style.size, scale, (cx, cy, cz), self.rule.per_view_centre)
        self.timings, self.mark = timings, mark
        self.rows: dict[str, dict] = {}
        self.drawings: dict[str, Drawing] = {}
        mark(_HLR)
        t = time.process_time()
        try:
            self.hlr = self._model(method)
        except Exception:
            if method == "poly":
                raise
            self.hlr = self._model("poly")  # stage fallback
        _add(timings, "hlr", time.process_time() - t)

    def _model(self, method: str):
        return HlrModel(self.shape, method, self.deflection, smooth_edges=self.rule.smooth_edges)

    def _project(self, view: str):
        self.mark(_HLR)
        t = time.process_time()
        try:
            lines = self.hlr.project(pose(view).direction, pose(view).x_direction)
        except Exception:
            if self.hlr.method.value == "poly":
                raise
            self.hlr = self._model("poly")  # stage fallback: every view of the cut from the mesh algorithm
            drawn, self.rows, self.drawings = list(self.rows), {}, {}
            for v in drawn:
                self.view(v)
            lines = self.hlr.project(pose(view).direction, pose(view).x_direction)
        _add(self.timings, "hlr", time.process_time() - t)
        return lines

    def view(self, view: str) -> dict:
        """The views.parquet-style row of ``view`` (drawn and written on first use)."""
        if view not in self.rows:
            lines = self._project(view)
            t = time.process_time()
            self.rows[view] = render_view(self.name, pose(view), lines.visible, lines.hidden, self.frame,
                                          self.style, "", getattr(lines, "method", self.hlr.method).value)  # packed: no file
            _add(self.timings, "render_write", time.process_time() - t)
        return self.rows[view]

    def drawing(self, view: str) -> Drawing:
        if view not in self.drawings:
            self.drawings[view] = Drawing.from_view(self.view(view))
        return self.drawings[view]


def _write_views(d: _Drawer, views: tuple[str, ...], out: Path, rel: str, framing: dict) -> dict:
    """Write an accepted cut's stored ``views`` (SVG, PNG) under their content names in ``rel``; their rows, with
    paths relative to the dataset root (polylines and scale kept for the validator)."""
    rows = {}
    for v in views:
        row = d.view(v)
        data = {"svg": row[SVG_TEXT].encode("utf-8"), "png": (row[PNG_IMAGE] or {}).get("bytes")}
        paths: dict[str, str | None] = {}
        for kind, blob in data.items():
            if blob is None:
                paths[kind] = None
            else:
                paths[kind] = path = f"{rel}/{content_name(blob, f'.{kind}', salt=v)}"
                write_bytes(out / path, blob)
                settle(out / path)
        rows[v] = {"svg": paths["svg"], "png": paths["png"], "png_sha256": row["png_sha256"],
                   "visible": row["visible"], "hidden": row["hidden"], "hlr_method": row["hlr_method"],
                   "scale": float(framing["scale"])}
    return rows


def _burn() -> None:
    while True:
        pass


def _attempt(job: CutJob, shape, k: int, attempt: int, cutter: dict, accepted: list[dict],
             mark: Callable[[str], None]) -> dict:
    """One cutter on the model ``shape``, boolean to STEP (in the forked copy): {"rule"} or the accepted cut's
    record, its drawings (the rules' inputs, which stay in the copy) included."""
    timings: dict[str, float] = {}
    family = CUTTER_FAMILIES[job.cutters]
    mark(_BOOLEAN)
    if k == 0 and attempt == 0 and job.slow_boolean:
        _burn()
    t = time.process_time()
    try:
        cut = cut_with(shape, cutter)
        removed = removed_fraction(job.model_volume, cut)
        rule = family.keep_cut(cut, removed)
    except Exception:
        rule = QuestionRejection.CUT_FAILED
    _add(timings, "boolean", time.process_time() - t)
    if rule is None:
        try:
            d = _Drawer(cut.shape, f"cut{k}", job.render, job.framing, job.hlr_method, timings, mark)
            rule = family.duplicate_rule(d, accepted, job)
        except Exception:
            rule = QuestionRejection.CUT_DRAW_FAILED
    if rule is not None:
        return {"rule": rule.value, "timings": dict(timings)}
    mark(_WRITE)
    t = time.process_time()
    out, rel = Path(job.out_dir), job.rel
    views = _write_views(d, CUT_VIEWS if k == 0 else (TARGET,), out, rel, job.framing)  # cut 0 gives F, R, T
    # the STEP is named after its candidate drawing: STEP bytes of multi-body shapes are not reproducible
    step = f"{rel}/{content_name(d.view(TARGET)[SVG_TEXT].encode('utf-8'), '.step', salt='step')}"
    _add(timings, "render_write", time.process_time() - t)
    t = time.process_time()
    cad.write_step(cut.shape, out / step, name=job.model_id)
    settle(out / step)
    _add(timings, "step", time.process_time() - t)
    return {"rule": None, "timings": dict(timings),
            "cut": {"cutter": cutter, "step": step, "attempt": attempt, "removed": removed, "views": views,
                    "drawings": {} if family.pixel_duplicates else {v: d.drawing(v) for v in d.rows}}}


class _CutSet:
    """What every attempt of one cut set shares, held by the forked copy for the whole set: the job, the model and
    the accepted cuts.

    Pickled (to a live copy, once per set) it carries the model's path, and the copy reads the model; a copy forked
    during the set inherits this process's model. ``accepted`` holds the records the attempts returned (no
    drawings); in the copy, ``drawings`` holds each accepted cut's drawings, the copy's own or, after a fork, made
    again from the record's stored views (the only ones the rules compare).
    """

    def __init__(self, job: CutJob, shape, accepted: list[dict]):
        self.job, self.shape, self.accepted = job, shape, accepted
        self.drawings: list[dict[str, Drawing]] = []

    def __getstate__(self) -> dict:
        return {"job": self.job, "accepted": self.accepted}

    def __setstate__(self, state: dict) -> None:
        self.job, self.shape, self.accepted = state["job"], None, state["accepted"]  # as __init__, without the model
        self.drawings = []

    def rule_inputs(self) -> list[dict]:
        """In the copy: the accepted cuts with their drawings (as the rules read them); the model read if needed."""
        if self.shape is None:
            self.shape = cad.read_shape(self.job.shape_path)
        for cut in self.accepted[len(self.drawings):]:
            self.drawings.append({} if CUTTER_FAMILIES[self.job.cutters].pixel_duplicates
                                 else {v: Drawing.from_view(row) for v, row in cut["views"].items()})
        return [{**cut, "drawings": d} for cut, d in zip(self.accepted, self.drawings)]


_COPY: BudgetedCopy | None = None  # this process's forked copy, kept for every cut set it makes


def _copy(budget_s: float) -> BudgetedCopy:
    global _COPY
    if _COPY is None or _COPY.budget_s != float(budget_s):
        if _COPY is not None:
            _COPY.close()
        _COPY = BudgetedCopy(_serve_attempt, budget_s)
    return _COPY


def _serve_attempt(cut_set: object, request: object, mark: Callable[[str], None]) -> dict:
    """In the copy: one attempt of the held cut set; an accepted cut is kept (with its drawings) for the next
    attempts and returned without its drawings."""
    if not isinstance(cut_set, _CutSet) or not isinstance(request, tuple):  # BudgetedCopy passes any state/request
        raise TypeError(f"a cut attempt needs the held _CutSet and a (k, attempt, cutter) request, not "
                        f"{type(cut_set).__name__} and {type(request).__name__}")
    k, attempt, cutter = request
    accepted = cut_set.rule_inputs()
    outcome = _attempt(cut_set.job, cut_set.shape, k, attempt, cutter, accepted, mark)
    if outcome["rule"] is None:
        cut = outcome["cut"]
        cut_set.drawings.append(cut.pop("drawings"))
        cut_set.accepted.append(cut)
    return outcome


def _own_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _failed_rule(outcome: CallOutcome) -> QuestionRejection:
    """The rule for an attempt that did not come back: over budget, raised or crashed, by its step."""
    if outcome.status is CallStatus.OVER_BUDGET and outcome.step in (_BOOLEAN, _HLR):
        return (QuestionRejection.CUT_BOOLEAN_OVER_BUDGET if outcome.step == _BOOLEAN
                else QuestionRejection.CUT_HLR_OVER_BUDGET)
    return QuestionRejection.CUT_FAILED if outcome.step == _BOOLEAN else QuestionRejection.CUT_DRAW_FAILED


def cut_set_unit(unit: QuestionUnit, settings: QuestionSettings, rng: np.random.Generator) -> dict:
    """The three-view-to-isometric task's child function.

    Each attempt draws its cutter from its own generator (seed, task, model, cut, attempt), so an attempt's
    cutter never depends on what earlier attempts drew; ``rng`` is not needed.
    """
    return make_cut_set(unit, settings)


def make_cut_set(unit: QuestionUnit, settings: QuestionSettings) -> dict:
    """Four accepted cut objects (STEP + drawings) of the unit's model, or a rejection; counters of rejected
    attempts by rule.

    ``unit``: ``model_id``, ``shape_path``, ``framing``, ``hlr_method``. Each boolean and each view's HLR gets
    ``cut_budget_s`` CPU seconds (module docstring); the whole set, its forked copies included,
    ``CUT_TIMEOUT_FACTOR`` unit budgets (``settings.timeout_s``).
    """
    cpu0 = _own_cpu()
    shape = cad.read_shape(unit["shape_path"])
    model_volume = volume(shape)
    if not model_volume > 0:
        return {"accepted": False, "rule": QuestionRejection.NO_VOLUME.value, "attempt_rejections": {},
                "timings": {}}
    rel = staged_cut_dir(unit["model_id"])
    folder = Path(settings.out_dir) / rel
    shutil.rmtree(folder, ignore_errors=True)  # leftovers of an interrupted run
    render, options = settings.render, settings.own(Options)
    bbox = CUTTER_BOXES[options.cutter_box](shape)
    if bbox is None:  # only an empty shape has no box, and its volume was refused above
        raise RuntimeError(f"model {unit['model_id']}: a shape of volume {model_volume:g} has no bounding box")
    job = CutJob(model_id=unit["model_id"], shape_path=unit["shape_path"], out_dir=settings.out_dir, rel=rel,
                 seed=settings.seed, bbox=bbox, model_volume=model_volume,
                 cutters=options.cutters, render=render, framing=unit["framing"], hlr_method=unit["hlr_method"],
                 tolerance_px=settings.tolerance_px, min_extent=render.tiny_fraction * render.size,
                 max_attempts=options.max_cut_attempts, unit_budget_s=settings.timeout_s * CUT_TIMEOUT_FACTOR,
                 slow_boolean=testhooks.active(SLOW_BOOLEAN_HOOK))
    timings: dict[str, float] = {}
    copy, cut_set = _copy(options.cut_budget_s), _CutSet(job, shape, [])
    copy.hold(cut_set)
    result = _cut_set(cut_set, copy, timings, lambda: _own_cpu() - cpu0 + timings.get("attempt_cpu", 0))
    _add(timings, "cpu", _own_cpu() - cpu0 + timings.get("attempt_cpu", 0))
    result["timings"] = dict(timings)
    if not result["accepted"]:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def _cut_set(cut_set: _CutSet, copy: BudgetedCopy, timings: dict[str, float],
             cpu_used: Callable[[], float]) -> dict:
    """The attempts loop of make_cut_set (``copy`` holds ``cut_set``): {"accepted", "cuts" or "rule",
    "attempt_rejections", "over_budget"}."""
    job, accepted = cut_set.job, cut_set.accepted  # a copy forked during the set starts from these accepted cuts
    attempts: Counter = Counter()
    over_budget: list[dict] = []
    family = CUTTER_FAMILIES[job.cutters]
    unit_budget_s = job.unit_budget_s

    def give_up(rule: QuestionRejection, **extra) -> dict:
        return {"accepted": False, "rule": rule.value, "attempt_rejections": dict(attempts),
                "over_budget": over_budget, **extra}

    for k in range(N_CANDIDATES):
        for attempt in range(job.max_attempts):
            rng = derive_rng(job.seed, "questions", TASK.value, job.model_id, "cut", k, attempt)
            cutter = family.make_cutter(job.bbox, rng)
            if family.refuse_unreachable and removable_volume(job.bbox, cutter) < MIN_REMOVED * job.model_volume:
                attempts[QuestionRejection.CUT_MISSED.value] += 1  # cannot remove enough: no boolean needed
                continue
            outcome = copy.call((k, attempt, cutter))
            _add(timings, "attempt_cpu", outcome.cpu_s)
            record: dict = {}  # what the attempt returned, when it came back
            if outcome.status is not CallStatus.OK:
                rule = _failed_rule(outcome)
                if outcome.status is CallStatus.OVER_BUDGET:
                    over_budget.append({"cut": k, "attempt": attempt, "step": outcome.step,
                                        "cpu_s": outcome.step_cpu_s})
            else:
                if not isinstance(outcome.value, dict):  # _serve_attempt returns a dict
                    raise TypeError(f"a cut attempt returned {type(outcome.value).__name__}, not its record")
                record = outcome.value
                for part, seconds in record["timings"].items():
                    _add(timings, part, seconds)
                rule = record["rule"] and QuestionRejection(record["rule"])
            if unit_budget_s is not None and cpu_used() > unit_budget_s:
                return give_up(QuestionRejection.UNIT_FAILED,
                               error=f"timeout: the cut set used more than its CPU budget of {unit_budget_s:g} s")
            if rule is not None:
                attempts[rule.value] += 1
                if len(over_budget) >= MAX_OVER_BUDGET:
                    return give_up(QuestionRejection.CUT_TOO_SLOW)
                continue
            accepted.append(record["cut"])
            break
        else:
            return give_up(QuestionRejection.CUT_ATTEMPTS_EXHAUSTED)
    return {"accepted": True, "cuts": accepted, "attempt_rejections": dict(attempts), "over_budget": over_budget}
