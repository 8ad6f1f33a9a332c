"""Drawings stage, child side: hidden-line drawings of one model in the 11 SPARE3D poses (+ random views).

``draw_model`` runs inside the killable child process (it calls OpenCASCADE through spare_gen.cad).
Per-model work (reading, fusing, loading into HLR) happens once; then each view is HLR + render.
Every view's lines are checked against the model's projected bounding box (``plausible_lines``): exact
HLR has been seen to return a point 10,000x outside an 11-unit part, which would shrink the whole frame
to a dot. Such a view is redrawn with the mesh algorithm; if that is broken too, the view is ``failed``.
Test hooks (``spare_gen.runner.testhooks``): ``broken_hlr`` plants such a far point in exact results.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from spare_gen.cad import read_shape
from spare_gen.cad.hlr import HlrMethod, HlrModel, ViewLines
from spare_gen.config.schema import RenderConfig
from spare_gen.drawings.flags import is_usable, model_flags
from spare_gen.drawings.poses import (
    RANDOM_VIEW_PREFIX,
    Pose,
    bbox_from_three_views,
    camera_position,
    fixed_poses,
    framing_for,
    random_poses,
)
from spare_gen.drawings.preset import drawing_rule
from spare_gen.drawings.render import Style, render_view
from spare_gen.drawings.settings import DrawSettings
from spare_gen.runner import testhooks

STAGE = "drawings"
MIXED = "mixed"  # some views exact, some from the mesh fallback
BOX_MARGIN = 0.25  # lines may reach this fraction of the projected box's larger side beyond it (box x 1.5)
BROKEN_VIEW = "HLR lines reach far outside the model's projected bounding box (exact and mesh algorithms)"


def model_poses(random_views: int, rng: np.random.Generator | None) -> list[Pose]:
    """The 11 fixed poses, then ``random_views`` random ones drawn from ``rng`` (the unit's generator)."""
    poses = fixed_poses()
    if random_views:
        if rng is None:
            raise ValueError(f"render.random_views = {random_views} needs the unit's random generator")
        poses += random_poses(random_views, rng)
    return poses


def projected_box(bbox: tuple[float, ...], pose: Pose) -> np.ndarray:
    """(2, 2) [min, max] of the 3D box ``bbox`` (xmin ymin zmin xmax ymax zmax) projected in ``pose``."""
    corners = np.array(list(itertools.product(*zip(bbox[:3], bbox[3:]))), dtype=float)
    uv = pose.project(corners)
    return np.stack([uv.min(axis=0), uv.max(axis=0)])


def plausible_lines(lines: ViewLines, box: np.ndarray) -> bool:
    """True if every point lies within ``box`` grown by BOX_MARGIN of its larger side (a sane HLR result)."""
    points = lines.visible + lines.hidden
    if not points:
        return True
    pts = np.concatenate(points)
    lo, hi = pts.min(axis=0), pts.max(axis=0)  # NaN propagates into both; two reductions, no full-size masks
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        return False
    grow = BOX_MARGIN * float(max(box[1] - box[0])) + 1e-9
    return bool((lo >= box[0] - grow).all() and (hi <= box[1] + grow).all())


def _plant_far_point(lines: ViewLines, box: np.ndarray) -> ViewLines:
    """Test hook ``broken_hlr``: the defect seen on a real STEP file, one point 10,000 box sizes away."""
    far = box[1] + 1e4 * float(max(box[1] - box[0]) + 1.0)
    visible = [np.vstack([lines.visible[0], far[None, :]])] + lines.visible[1:] if lines.visible else [far[None, :]]
    return ViewLines(visible, lines.hidden, lines.method)


def project_checked(hlr: HlrModel, pose: Pose) -> ViewLines | None:
    """One view's lines, redrawn with the mesh algorithm if the exact ones are implausible; None if both are."""
    box = projected_box(hlr.bbox, pose)
    lines = hlr.project(pose.direction, pose.x_direction)
    if lines.method is HlrMethod.EXACT and testhooks.active("broken_hlr"):
        lines = _plant_far_point(lines, box)
    if plausible_lines(lines, box):
        return lines
    if lines.method is HlrMethod.EXACT:
        lines = hlr.project_poly(pose.direction, pose.x_direction)
        if plausible_lines(lines, box):
            return lines
    return None


def summarize_methods(requested: str, view_methods: dict[str, str]) -> tuple[str, str]:
    """Model-level method ("exact", "poly" or "mixed") and why views left the requested method."""
    fell_back = [name for name, m in view_methods.items() if m != requested]
    if not fell_back:
        return requested, ""
    used = set(view_methods.values())
    method = used.pop() if len(used) == 1 else MIXED
    return method, (f"exact HLR gave no plausible drawing for view(s) {', '.join(fell_back)}; "
                    "drawn with the mesh algorithm")


def draw_unit(unit: dict, settings: DrawSettings, rng: np.random.Generator) -> dict:
    """The stage's child function: ``unit`` = {model_id, shape_path, method (this attempt's HLR algorithm)}."""
    return draw_model(unit["model_id"], unit["shape_path"], settings.out_dir, settings.render, rng, unit["method"])


def draw_model(model_id: str, shape_path: str, out_dir: str, render: RenderConfig, rng: np.random.Generator | None,
               method: str) -> dict:
    """Draw every view of one model; return ``{"model": drawings row, "views": [views rows], "timing": {...}}``.

    ``rng`` draws the random views (``render.random_views``); None when there are none.
    """
    start = time.process_time()
    style = Style.from_render(render)
    rule = drawing_rule(render)
    hlr = HlrModel(read_shape(shape_path), method, render.deflection, smooth_edges=rule.smooth_edges)
    poses = model_poses(render.random_views, rng)
    projected, seconds = {}, {}
    for pose in poses:
        t = time.process_time()
        projected[pose.name] = project_checked(hlr, pose)
        seconds[pose.name] = round(time.process_time() - t, 6)
    drawn = {k: v for k, v in projected.items() if v is not None}
    bbox = bbox_from_three_views({k: v.visible + v.hidden for k, v in drawn.items()}) or hlr.bbox
    framing = framing_for(bbox, style.size, render.margin, rule.viewbox_factor, rule.per_view_centre)
    views = []
    for pose in poses:
        lines = projected[pose.name]
        if lines is None:
            views.append({"model_id": model_id, "view": pose.name, "status": "failed", "error": BROKEN_VIEW})
            continue
        t = time.process_time()
        row = render_view(model_id, pose, lines.visible, lines.hidden, framing, style, out_dir, lines.method.value)
        seconds[pose.name] = round(seconds[pose.name] + time.process_time() - t, 6)
        if pose.name.startswith(RANDOM_VIEW_PREFIX):
            row["camera_rotation"] = pose.rotation().tolist()
            row["camera_position"] = camera_position(framing, pose, bbox)
        views.append(row)
    method, fallback = summarize_methods(hlr.method.value, {name: v.method.value for name, v in drawn.items()})
    failed = [name for name, v in projected.items() if v is None]
    model = {
        "model_id": model_id, "status": "failed" if failed else "ok",
        "error": f"view(s) {', '.join(failed)}: {BROKEN_VIEW}" if failed else "",
        "hlr_method": method, "fallback_reason": fallback,
        "scale": framing.scale, "center": list(framing.center), "bbox": list(bbox),
        **model_flags([v for v in views if v["status"] == "ok"], style.size, render.tiny_fraction),
    }
    model["usable"] = is_usable(model)
    timing = {"model": round(time.process_time() - start, 6), "views": seconds}  # CPU s of this child
    return {"model": model, "views": views, "timing": timing}
