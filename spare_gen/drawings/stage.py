"""Drawings stage, child side: hidden-line drawings of one model in the 11 SPARE3D poses (+ random views).

``draw_model`` runs inside the killable child process (it calls OpenCASCADE through spare_gen.cad).
Per-model work (reading, fusing, loading into HLR) happens once; then each view is HLR + render.
Test hooks: ``debug.hang`` / ``debug.crash`` entries ``<model_id>`` or ``drawings:<model_id>`` fire
for every method, ``drawings-exact:<model_id>`` only for exact HLR (to test the mesh fallback).
"""

from __future__ import annotations

import time

from spare_gen.cad import read_shape
from spare_gen.cad.hlr import HlrModel
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
from spare_gen.rng import derive_rng
from spare_gen.runner import testhooks

STAGE = "drawings"
MIXED = "mixed"  # some views exact, some from the mesh fallback


def model_poses(model_id: str, seed: int, random_views: int) -> list[Pose]:
    """The 11 fixed poses, then ``random_views`` random ones drawn from (seed, "random-views", model_id)."""
    poses = fixed_poses()
    if random_views:
        poses += random_poses(random_views, derive_rng(seed, "random-views", model_id))
    return poses


def summarize_methods(requested: str, view_methods: dict[str, str]) -> tuple[str, str]:
    """Model-level method ("exact", "poly" or "mixed") and why views left the requested method."""
    fell_back = [name for name, m in view_methods.items() if m != requested]
    if not fell_back:
        return requested, ""
    used = set(view_methods.values())
    method = used.pop() if len(used) == 1 else MIXED
    return method, f"exact HLR gave no drawing for view(s) {', '.join(fell_back)}; drawn with the mesh algorithm"


def draw_model(
    model_id: str, shape_path: str, out_dir: str, render: dict, seed: int, method: str, debug: dict | None = None,
) -> dict:
    """Draw every view of one model; return ``{"model": drawings row, "views": [views rows]}`` (plain JSON)."""
    testhooks.trigger(debug, STAGE, model_id)
    testhooks.trigger(debug, f"{STAGE}-{method}", model_id)  # e.g. debug.hang = ["drawings-exact:<id>"]
    start = time.perf_counter()
    style = Style.from_render(render)
    rule = drawing_rule(render)
    hlr = HlrModel(read_shape(shape_path), method, float(render["deflection"]), smooth_edges=rule.smooth_edges)
    poses = model_poses(model_id, seed, int(render.get("random_views", 0)))
    projected, seconds = {}, {}
    for pose in poses:
        t = time.perf_counter()
        projected[pose.name] = hlr.project(pose.direction, pose.x_direction)
        seconds[pose.name] = time.perf_counter() - t
    bbox = bbox_from_three_views({k: v.visible + v.hidden for k, v in projected.items()}) or hlr.bbox
    framing = framing_for(bbox, style.size, float(render["margin"]), rule.viewbox_factor, rule.per_view_centre)
    views = []
    for pose in poses:
        lines = projected[pose.name]
        row = render_view(model_id, pose, lines.visible, lines.hidden, framing, style, out_dir, lines.method.value,
                          seconds[pose.name])
        if pose.name.startswith(RANDOM_VIEW_PREFIX):
            row["camera_rotation"] = pose.rotation().tolist()
            row["camera_position"] = camera_position(framing, pose, bbox)
        views.append(row)
    method, fallback = summarize_methods(hlr.method.value, {name: v.method.value for name, v in projected.items()})
    model = {
        "model_id": model_id, "status": "ok", "error": "", "hlr_method": method, "fallback_reason": fallback,
        "scale": framing.scale, "center": list(framing.center), "bbox": list(bbox),
        **model_flags(views, style.size, float(render["tiny_fraction"])),
        "seconds": round(time.perf_counter() - start, 6),
    }
    model["usable"] = is_usable(model)
    return {"model": model, "views": views}
