"""Cut sets for three-view-to-isometric: four distinct cut objects of one model, drawn like the model.

Runs in the isolated child. Cut ``k`` tries cutters from derive_rng(seed, "questions", task, model_id,
"cut", k, attempt) until one passes every rule (at most ``max_attempts``). Cut 0 is the source of the
question's F, R, T and of the correct answer (the four cutters are exchangeable, so this equals a
random choice; the answer position is assigned later, balanced). Every cut object is drawn with the
original model's framing (scale and centre) through the drawing stage's own HLR and renderer, so the
four candidates and the three views share one scale and nothing but geometry tells them apart. The
accepted files are then named by their content (``per_question_files``): no path says which cut is 0.
"""

from __future__ import annotations

import dataclasses

import shutil
import time
from collections import Counter
from pathlib import Path

from spare_gen.config.schema import TaskName
from spare_gen.questions.candidates import Drawing, near_duplicate
from spare_gen.config.schema import CutterFamily, RenderConfig
from spare_gen.questions.cutters import random_cutter
from spare_gen.questions.cutters_spare3d import spare3d_cut_rule, spare3d_cutter, spare3d_drawing_rule
from spare_gen.questions.layout import FRONT, N_CANDIDATES, RIGHT, TARGET_POSE, TOP, pose_view
from spare_gen.questions.outputs import CUTS_DIR
from spare_gen.questions.per_question_files import move_to_content_name
from spare_gen.questions.rejections import QuestionRejection
from spare_gen.rng import derive_rng
from spare_gen.runner import testhooks

TASK = TaskName.THREE_VIEW_TO_ISOMETRIC.value
CUT_VIEWS = (FRONT, RIGHT, TOP, pose_view(TARGET_POSE))
MIN_REMOVED = 0.02  # a cut removing less than this share of the volume "missed" the model
MAX_REMOVED = 0.9  # a cut removing more leaves a sliver
STAGE = "questions"


def cut_dir(model_id: str) -> str:
    """Folder of a model's cut objects, relative to the dataset root."""
    return f"{CUTS_DIR}/{model_id}"


def _cut_rule(cut, removed: float) -> QuestionRejection | None:
    """``cut``: a spare_gen.cad.cut.Cut; ``removed``: share of the model's volume it took away."""
    if not cut.has_faces or removed > MAX_REMOVED:
        return QuestionRejection.CUT_EMPTY
    if removed < MIN_REMOVED:
        return QuestionRejection.CUT_MISSED
    if not cut.valid:
        return QuestionRejection.CUT_INVALID
    return None


def draw_cut(shape, name: str, folder: Path, render: RenderConfig, framing: dict, method: str, timings: Counter) -> dict:
    """Draw the CUT_VIEWS of a cut object with a fixed framing; view -> views.parquet-style row."""
    from spare_gen.cad.hlr import HlrModel
    from spare_gen.drawings.poses import Framing, pose
    from spare_gen.drawings.preset import drawing_rule
    from spare_gen.drawings.render import Style, render_view

    style = dataclasses.replace(Style.from_render(render), packed=False)  # cut objects' drawings stay files
    rule = drawing_rule(render)
    frame = Framing(style.size, float(framing["scale"]), tuple(float(v) for v in framing["center"]),
                    rule.per_view_centre)
    t = time.perf_counter()
    try:
        hlr = HlrModel(shape, method, render.deflection, smooth_edges=rule.smooth_edges)
        projected = {v: hlr.project(pose(v).direction, pose(v).x_direction) for v in CUT_VIEWS}
    except Exception:
        if method == "poly":
            raise
        hlr = HlrModel(shape, "poly", render.deflection, smooth_edges=rule.smooth_edges)  # stage fallback
        projected = {v: hlr.project(pose(v).direction, pose(v).x_direction) for v in CUT_VIEWS}
    timings["hlr"] += time.perf_counter() - t
    t = time.perf_counter()
    rows = {v: render_view(name, pose(v), projected[v].visible, projected[v].hidden, frame, style, folder,
                           getattr(projected[v], "method", hlr.method).value) for v in CUT_VIEWS}
    timings["render_write"] += time.perf_counter() - t
    return rows


def _drawing_rule(rows: dict, accepted: list[dict], tolerance_px: float, min_extent: float
                  ) -> QuestionRejection | None:
    if any(r["n_visible"] + r["n_hidden"] == 0 or r["extent"] < min_extent for r in rows.values()):
        return QuestionRejection.CUT_DRAW_FAILED
    mine = {v: Drawing.from_view(r) for v, r in rows.items()}
    target = pose_view(TARGET_POSE)
    if any(near_duplicate(mine[target], other["drawings"][target], tolerance_px) for other in accepted):
        return QuestionRejection.CUT_DUPLICATE
    if accepted and all(near_duplicate(mine[v], accepted[0]["drawings"][v], tolerance_px)
                        for v in (FRONT, RIGHT, TOP)):
        return QuestionRejection.CUT_AMBIGUOUS
    return None


def _public(rows: dict, prefix: str, framing: dict) -> dict:
    """View rows with paths relative to the dataset root (polylines and scale kept for the validator)."""
    out = {}
    for v, r in rows.items():
        out[v] = {"svg": f"{prefix}/{r['svg']}", "png": f"{prefix}/{r['png']}" if r["png"] else None,
                  "png_sha256": r["png_sha256"], "visible": r["visible"], "hidden": r["hidden"],
                  "hlr_method": r["hlr_method"], "scale": float(framing["scale"])}
    return out


def _content_names(out: Path, rel: str, cut: dict, keep_views: tuple[str, ...]) -> None:
    """Move an accepted cut's STEP and its ``keep_views`` drawings to content names in its model's folder
    (paths updated in place); its other drawings only served the in-child rules and are dropped."""
    # the STEP is named after its candidate drawing: STEP bytes of multi-body shapes are not reproducible
    target_svg = out / cut["views"][pose_view(TARGET_POSE)]["svg"]
    cut["step"] = move_to_content_name(out, cut["step"], rel, salt="step", name_from=target_svg)
    cut["views"] = {v: row for v, row in cut["views"].items() if v in keep_views}
    for v, row in cut["views"].items():
        for kind in ("svg", "png"):
            if row[kind]:
                row[kind] = move_to_content_name(out, row[kind], rel, salt=v)


def cut_set_unit(unit: dict, settings, rng) -> dict:
    """The three-view-to-isometric task's child function (``settings``: ``QuestionSettings``).

    Each attempt draws its cutter from its own generator (seed, task, model, cut, attempt), so an attempt's
    cutter never depends on what earlier attempts drew; ``rng`` is not needed.
    """
    return make_cut_set(unit["model_id"], unit["shape_path"], settings.out_dir, settings.seed, settings.render,
                        unit["framing"], unit["hlr_method"], settings.tolerance_px, settings.max_cut_attempts,
                        cutters=settings.cutters.value)


def make_cut_set(
    model_id: str, shape_path: str, out_dir: str, seed: int, render: RenderConfig, framing: dict, hlr_method: str,
    tolerance_px: float, max_attempts: int, debug: dict | None = None, cutters: str = CutterFamily.SPARE_GEN.value,
) -> dict:
    """Four accepted cut objects (STEP + drawings) or a rejection; counters of rejected attempts by rule."""
    from spare_gen import cad
    from spare_gen.cad.cut import cut_with, removed_fraction
    from spare_gen.cad.props import bounding_box, volume
    from spare_gen.drawings.render import DRAWINGS_DIR

    testhooks.trigger(debug, STAGE, model_id)
    shape = cad.read_shape(shape_path)
    bbox = bounding_box(shape)
    model_volume = volume(shape)
    if not model_volume > 0:
        return {"accepted": False, "rule": QuestionRejection.NO_VOLUME.value, "attempt_rejections": {},
                "timings": {}}
    rel = cut_dir(model_id)
    folder = Path(out_dir) / rel
    shutil.rmtree(folder, ignore_errors=True)  # leftovers of an interrupted run
    attempts: Counter = Counter()
    timings: Counter = Counter()
    min_extent = render.tiny_fraction * render.size
    accepted: list[dict] = []
    original = CutterFamily(cutters) is CutterFamily.SPARE3D  # the original generator's cutters and acceptance
    make_cutter = spare3d_cutter if original else random_cutter
    for k in range(N_CANDIDATES):
        for attempt in range(max_attempts):
            cutter = make_cutter(bbox, derive_rng(seed, "questions", TASK, model_id, "cut", k, attempt))
            t = time.perf_counter()
            try:
                cut = cut_with(shape, cutter)
                removed = removed_fraction(model_volume, cut)
                rule = spare3d_cut_rule(cut) if original else _cut_rule(cut, removed)
            except Exception:
                rule = QuestionRejection.CUT_FAILED
            timings["boolean"] += time.perf_counter() - t
            if rule is None:
                try:
                    rows = draw_cut(cut.shape, f"cut{k}", folder, render, framing, hlr_method, timings)
                    rule = (spare3d_drawing_rule(rows, accepted, pose_view(TARGET_POSE)) if original
                            else _drawing_rule(rows, accepted, tolerance_px, min_extent))
                except Exception:
                    rule = QuestionRejection.CUT_DRAW_FAILED
            if rule is not None:
                attempts[rule.value] += 1
                continue
            t = time.perf_counter()
            step = f"{rel}/cut{k}.step"
            cad.write_step(cut.shape, Path(out_dir) / step, name=model_id)
            timings["render_write"] += time.perf_counter() - t
            accepted.append({"cutter": cutter, "step": step, "attempt": attempt, "removed": removed,
                             "views": _public(rows, rel, framing),
                             "drawings": {v: Drawing.from_view(r) for v, r in rows.items()}})
            break
        else:
            shutil.rmtree(folder, ignore_errors=True)
            return {"accepted": False, "rule": QuestionRejection.CUT_ATTEMPTS_EXHAUSTED.value,
                    "attempt_rejections": dict(attempts), "timings": dict(timings)}
    for k, c in enumerate(accepted):  # cut 0 gives F, R, T; every cut gives a candidate
        del c["drawings"]
        _content_names(Path(out_dir), rel, c, CUT_VIEWS if k == 0 else (pose_view(TARGET_POSE),))
    shutil.rmtree(folder / DRAWINGS_DIR, ignore_errors=True)
    return {"accepted": True, "cuts": accepted, "attempt_rejections": dict(attempts), "timings": dict(timings)}
