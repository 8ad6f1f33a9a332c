"""Drawings stage, child side: hidden-line drawings of one model in the 11 SPARE3D poses (+ random views).

``draw_model`` runs inside the killable child process (it calls OpenCASCADE through spare_gen.cad).
Per-model work (reading, fusing, loading into HLR) happens once; then each view is HLR + render.
Every view's lines are checked on both sides (``view_problem``). Too far: against the model's projected
bounding box (``plausible_lines``): exact HLR has been seen to return a point 10,000x outside an 11-unit
part, which would shrink the whole frame to a dot. Well short: against the model's own projected box (``box_fill``:
the box of the solids as given, before they are fused; an IGES file of 40 solids in 4 groups was once drawn as one
flat fragment 1/4.5 of it): lines spanning under BOX_FILL of it on either image axis do not show the model. Too
short: against the projection of the model's own edges, sampled in 3D (``shortfall``): a drawing whose lines stop
more than SHORTFALL_PX short of them on any side has lost lines. Such a view is redrawn with the mesh algorithm; if
that fails too, the view is ``failed`` with both reasons. Off the model: every drawn line must lie within STRAY_PX
of the projection of some edge or silhouette of the model (``stray.Outline``). Test hooks (``spare_gen.runner.testhooks``): ``broken_hlr``
plants such a far point in exact results, ``missing_hlr_line`` cuts the last tenth of the view's width off them,
``stray_hlr_line`` (fired by tests in-process) adds the projected box's diagonal, ``fragment_hlr`` (in-process, both
methods) shrinks every view to FRAGMENT_FRACTION of its size. Edges that bound no face are left out of the drawing
and its framing unless ``render.loose_edges`` (``cad.hlr.HlrModel``); the drawings row counts them.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

import numpy as np

from spare_gen.cad import read_shape
from spare_gen.cad.hlr import HlrMethod, HlrModel, ViewLines
from spare_gen.cad.props import brep_bounding_box
from spare_gen.config.base import BoxRule
from spare_gen.config.schema import RenderConfig
from spare_gen.stages.drawings.flags import is_usable, model_flags
from spare_gen.canvas.poses import (
    RANDOM_VIEW_PREFIX,
    Pose,
    bbox_from_three_views,
    camera_position,
    fixed_poses,
    framing_for,
    random_poses,
)
from spare_gen.stages.drawings.preset import DrawingRule, drawing_rule
from spare_gen.stages.drawings.render import Style, render_view
from spare_gen.stages.drawings.schema import DrawingRow, failed_view
from spare_gen.stages.drawings.settings import DrawAttempt, DrawSettings
from spare_gen.stages.drawings.stray import STRAY_PX, Outline
from spare_gen.runner import testhooks
from spare_gen.runner.isolation import Status

MIXED = "mixed"  # some views exact, some from the mesh fallback
BOX_MARGIN = 0.25  # lines may reach this fraction of the projected box's larger side beyond it (box x 1.5)
SHORTFALL_PX = 2.0  # lines may stop this many canvas px short of the projected model edges on any side
# a view's lines must span this fraction of the model's own projected box (the 2D box of its solids as given, before
# fusing: edges and curved faces' mesh nodes, projected) on both image axes. Every ok view of 40 CSG models and the
# real test files spans at least 0.995 of it; the reported fragment spanned 1/4.5
BOX_FILL = 0.9
BOX_FILL_MIN_PX = 4.0  # an axis on which the model's projected box is narrower than this (canvas px) is not checked
FAR_LINES = "lines reach far outside the model's projected bounding box"
NO_EDGES = "the model's faces carry no edges: nothing to draw"
MISSING_FRACTION = 0.1  # test hook missing_hlr_line: this fraction of the view's width loses its lines
FRAGMENT_FRACTION = 1 / 4.5  # test hook fragment_hlr: the drawing's size, a fraction of the model's (as reported)


def model_poses(random_views: int, rng: np.random.Generator | None, fixed: tuple[str, ...] | None = None) -> list[Pose]:
    """The fixed poses (``fixed``, in ``FIXED_VIEWS`` order; None: all 11), then ``random_views`` random ones drawn
    from ``rng`` (the unit's generator)."""
    poses = [p for p in fixed_poses() if fixed is None or p.name in fixed]
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
    if lines.extent is None:
        return True
    lo, hi = lines.extent  # NaN propagates into both; two reductions, no full-size masks
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        return False
    grow = BOX_MARGIN * float(max(box[1] - box[0])) + 1e-9
    return bool((lo >= box[0] - grow).all() and (hi <= box[1] + grow).all())


def shortfall(lines: ViewLines, reach: np.ndarray | None) -> float:
    """Largest distance (model units) by which the lines' 2D box falls inside ``reach`` on any side.

    ``reach``: (2, 2) [min, max] of the model's projected edges (None: no edges, nothing to fall short of).
    """
    if reach is None:
        return 0.0
    if lines.extent is None:
        return float(np.max(reach[1] - reach[0]))
    lo, hi = lines.extent
    return float(max(0.0, *(lo - reach[0]), *(reach[1] - hi)))


def box_fill(lines: ViewLines, own_box: np.ndarray, px_per_unit: float) -> np.ndarray:
    """(2,) the lines' 2D extent over ``own_box``'s (the model's own projected box: ``HlrModel.model_points``
    projected), per image axis; 1 on an axis where the box is under BOX_FILL_MIN_PX wide (a face seen edge-on:
    nothing to fall short of)."""
    size = own_box[1] - own_box[0]
    drawn = np.zeros(2) if lines.extent is None else lines.extent[1] - lines.extent[0]
    return np.where(size * px_per_unit < BOX_FILL_MIN_PX, 1.0, drawn / np.maximum(size, 1e-300))


def view_problem(lines: ViewLines, box: np.ndarray, reach: np.ndarray | None, px_per_unit: float,
                 outline: Outline | None = None, pose: Pose | None = None, own_box: np.ndarray | None = None) -> str:
    """Why this view's lines cannot be right ("" if they may be): too far out, well short of the model's own
    projected box (``own_box``, of the solids as given: see ``BOX_FILL``), short of the model's edges, or (given the
    model's ``outline`` and the view's ``pose``) off every projected edge and silhouette of the model."""
    if not plausible_lines(lines, box):
        return FAR_LINES
    fill = np.ones(2) if own_box is None else box_fill(lines, own_box, px_per_unit)
    if fill.min() < BOX_FILL:
        return (f"lines span {100 * fill[0]:.0f} % x {100 * fill[1]:.0f} % (width x height) of the model's projected "
                f"box, under {100 * BOX_FILL:.0f} %")
    short = shortfall(lines, reach) * px_per_unit
    if short > SHORTFALL_PX:
        return f"lines stop {short:.1f} px short of the model's projected edges"
    stray = 0.0 if outline is None or pose is None else outline.stray_beyond_px(lines, pose)
    if stray > STRAY_PX:
        return f"a line strays {stray:.1f} px from every projected edge and silhouette of the model"
    return ""


def _plant_far_point(lines: ViewLines, box: np.ndarray) -> ViewLines:
    """Test hook ``broken_hlr``: the defect seen on a real STEP file, one point 10,000 box sizes away."""
    far = box[1] + 1e4 * float(max(box[1] - box[0]) + 1.0)
    visible = [np.vstack([lines.visible[0], far[None, :]])] + lines.visible[1:] if lines.visible else [far[None, :]]
    return ViewLines(visible, lines.hidden, lines.method)


def _plant_missing_segment(lines: ViewLines) -> ViewLines:
    """Test hook ``missing_hlr_line``: the defect seen on a real STEP file, the lines' far end (last tenth of
    the view's width) cut off, as a sampler that skips an edge's overhang does."""
    points = lines.visible + lines.hidden
    if not points:
        return lines
    xs = np.concatenate(points)[:, 0]
    cut = xs.max() - MISSING_FRACTION * (xs.max() - xs.min())

    def clip(group: list[np.ndarray]) -> list[np.ndarray]:
        return [line[line[:, 0] <= cut] for line in group if np.count_nonzero(line[:, 0] <= cut) >= 2]
    return ViewLines(clip(lines.visible), clip(lines.hidden), lines.method)


def _plant_stray_segment(lines: ViewLines, box: np.ndarray) -> ViewLines:
    """Test hook ``stray_hlr_line``: the defect seen on a real STEP file, a straight line that matches no edge (here
    the projected box's diagonal, which crosses a face or leaves the part)."""
    return ViewLines(lines.visible + [box.copy()], lines.hidden, lines.method)


def _plant_fragment(lines: ViewLines) -> ViewLines:
    """Test hook ``fragment_hlr``: the defect seen on a real IGES file (40 solids in 4 groups), a drawing of one
    fragment of the model, FRAGMENT_FRACTION of its size: every line shrunk towards the lines' lower left corner."""
    points = lines.visible + lines.hidden
    if not points:
        return lines
    corner = np.concatenate(points).min(axis=0)

    def shrink(group: list[np.ndarray]) -> list[np.ndarray]:
        return [corner + FRAGMENT_FRACTION * (line - corner) for line in group]
    return ViewLines(shrink(lines.visible), shrink(lines.hidden), lines.method)


def _with_hooks(lines: ViewLines, box: np.ndarray) -> ViewLines:
    if testhooks.active("fragment_hlr"):  # either method: the fragment is the shape's, not one algorithm's
        lines = _plant_fragment(lines)
    if lines.method is HlrMethod.EXACT and testhooks.active("stray_hlr_line"):
        lines = _plant_stray_segment(lines, box)
    if lines.method is HlrMethod.EXACT and testhooks.active("broken_hlr"):
        lines = _plant_far_point(lines, box)
    if lines.method is HlrMethod.EXACT and testhooks.active("missing_hlr_line"):
        lines = _plant_missing_segment(lines)
    return lines


def project_checked(hlr: HlrModel, pose: Pose, px_per_unit: float,
                    outline: Outline | None = None) -> tuple[ViewLines | None, str]:
    """One view's lines, redrawn with the mesh algorithm if the exact ones are implausible; (None, why) if both are.

    ``px_per_unit`` converts the shortfall to canvas pixels (the model's estimated drawing scale); ``outline``
    (``Outline.of(hlr, px_per_unit)``, built once per model) adds the check for stray lines.
    """
    if hlr.edgeless_faces:
        return None, NO_EDGES
    box = projected_box(hlr.bbox, pose)
    own = pose.project(hlr.model_points)
    own_box = np.stack([own.min(axis=0), own.max(axis=0)]) if len(own) else None
    edges = pose.project(hlr.edge_points if len(hlr.edge_points) or outline is None else outline.edges)
    reach = np.stack([edges.min(axis=0), edges.max(axis=0)]) if len(edges) else None  # loose edges: if no other
    lines = _with_hooks(hlr.project(pose.direction, pose.x_direction), box)
    problem = view_problem(lines, box, reach, px_per_unit, outline, pose, own_box)
    if not problem:
        return lines, ""
    reasons = [f"{lines.method.value} HLR: {problem}"]
    if lines.method is HlrMethod.EXACT:
        lines = _with_hooks(hlr.project_poly(pose.direction, pose.x_direction), box)
        problem = view_problem(lines, box, reach, px_per_unit, outline, pose, own_box)
        if not problem:
            return lines, ""
        reasons.append(f"{lines.method.value} HLR: {problem}")
    return None, "; ".join(reasons)


def summarize_methods(requested: str, view_methods: dict[str, str]) -> tuple[str, str]:
    """Model-level method ("exact", "poly" or "mixed") and why views left the requested method."""
    fell_back = [name for name, m in view_methods.items() if m != requested]
    if not fell_back:
        return requested, ""
    used = set(view_methods.values())
    method = used.pop() if len(used) == 1 else MIXED
    return method, (f"exact HLR gave no plausible drawing for view(s) {', '.join(fell_back)}; "
                    "drawn with the mesh algorithm")


def estimated_scale(hlr: HlrModel, size: int, margin: float, rule: DrawingRule, viewbox_box=None) -> float:
    """Canvas px per model unit the drawing will have, estimated before any view from the sampled edges' box."""
    edges = hlr.edge_points
    bbox = (*edges.min(axis=0), *edges.max(axis=0)) if len(edges) else hlr.bbox
    return framing_for(bbox, size, margin, rule.viewbox_factor, viewbox_box=viewbox_box).scale


def draw_unit(unit: DrawAttempt, settings: DrawSettings, rng: np.random.Generator) -> dict:
    """The stage's child function: one attempt at drawing one model."""
    render = settings.render
    if unit["deflection_factor"] != 1.0:
        render = render.model_copy(update={"deflection": render.deflection * unit["deflection_factor"]})
    return draw_model(unit["model_id"], unit["shape_path"], settings.out_dir, render, rng, unit["method"],
                      settings.views)


def draw_model(model_id: str, shape_path: str, out_dir: str, render: RenderConfig, rng: np.random.Generator | None,
               method: str, fixed_views: tuple[str, ...] | None = None) -> dict:
    """Draw the views of one model; return ``{"model": drawings row, "views": [views rows], "timing": {...}}``.

    ``rng`` draws the random views (``render.random_views``); None when there are none. ``fixed_views``: the fixed
    views to draw (None: all 11); F, R, T must be among them, as the framing reads them. A view left out changes no
    other view's bytes: the scale comes from the 3D box projected on all 11 poses (computed, not drawn).
    """
    start = time.process_time()
    rule = drawing_rule(render)
    shape = read_shape(shape_path)
    viewbox_box = brep_bounding_box(shape) if rule.box is BoxRule.BREP else None
    hlr = HlrModel(shape, method, render.deflection, smooth_edges=rule.smooth_edges, loose_edges=render.loose_edges)
    poses = model_poses(render.random_views, rng, fixed_views)
    projected, problems, seconds = {}, {}, {}
    px_per_unit = estimated_scale(hlr, render.size, render.margin, rule, viewbox_box)
    outline = Outline.of(hlr, px_per_unit)
    for pose in poses:
        t = time.process_time()
        projected[pose.name], problems[pose.name] = project_checked(hlr, pose, px_per_unit, outline)
        seconds[pose.name] = round(time.process_time() - t, 6)
    drawn = {k: v for k, v in projected.items() if v is not None}
    bbox = bbox_from_three_views({k: v.visible + v.hidden for k, v in drawn.items()}) or hlr.bbox
    framing = framing_for(bbox, render.size, render.margin, rule.viewbox_factor, rule.per_view_centre, viewbox_box)
    style = Style.from_render(render, framing.scale)
    views = []
    for pose in poses:
        lines = projected[pose.name]
        if lines is None:
            views.append(failed_view(model_id, pose.name, Status.FAILED, problems[pose.name]))
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
    row_of_model = DrawingRow(
        model_id=model_id, status=Status.FAILED if failed else Status.OK,
        error="; ".join(f"view {name}: {problems[name]}" for name in failed),
        hlr_method=method, fallback_reason=fallback,
        scale=framing.scale, center=list(framing.center), bbox=list(bbox), n_loose_edges=hlr.loose_edges,
        **model_flags([v for v in views if v["status"] == Status.OK], style.size, render.tiny_fraction),
    )
    model = replace(row_of_model, usable=is_usable(row_of_model)).as_dict()
    timing = {"model": round(time.process_time() - start, 6), "views": seconds}  # CPU s of this child
    return {"model": model, "views": views, "timing": timing}
