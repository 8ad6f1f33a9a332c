"""One view of one model: HLR polylines (model units) to canvas pixels, SVG and PNG files, a views.parquet row."""

from __future__ import annotations

import hashlib
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from spare_gen.atomic import write_bytes
from spare_gen.config.schema import DrawingStore, HiddenStyle, LineWidthRule, RenderConfig
from spare_gen.canvas.poses import Framing, Pose
from spare_gen.stages.drawings.preset import LineCap, drawing_rule
from spare_gen.canvas.raster import ink_fraction, png_bytes, rasterize
from spare_gen.stages.drawings.schema import ViewRow
from spare_gen.canvas.svg import Layer, quantize, svg_document
from spare_gen.store.packed import packed_row
from spare_gen.runner.isolation import Status
from spare_gen.stage_table import DRAWINGS

VISIBLE_COLOR = (0, 0, 0)
HIDDEN_RED = (255, 0, 0)  # SPARE3D: hidden lines in solid red
HIDDEN_GREY = (128, 128, 128)
HIDDEN_DASH = (2.0, 1.5)  # px on, px off (drafting convention: short dashes)
DRAWINGS_DIR = DRAWINGS.folder

_RENDER = RenderConfig.model_fields


@dataclass(frozen=True)
class Style:
    """How to draw: canvas side, colours and widths in output pixels, whether to make PNGs, and whether the bytes
    go into the views row (``render.store = "parquet"``) instead of files."""

    size: int = _RENDER["size"].default  # defaults declared once, in the config schema
    visible_width: float = _RENDER["visible_width"].default
    hidden_width: float = _RENDER["hidden_width"].default
    hidden_style: HiddenStyle = HiddenStyle.RED
    png: bool = True
    linecap: LineCap = LineCap.BUTT
    packed: bool = False

    @classmethod
    def from_render(cls, render: RenderConfig, px_per_unit: float) -> "Style":
        """The render section's style for a drawing of ``px_per_unit`` canvas pixels per model unit (its framing's
        scale), which widths in model units (``render.line_width_rule = "model_units"``) follow."""
        k = px_per_unit if render.line_width_rule is LineWidthRule.MODEL_UNITS else 1.0
        return cls(
            size=render.size, visible_width=render.visible_width * k, hidden_width=render.hidden_width * k,
            hidden_style=render.hidden_style, png=render.png, linecap=drawing_rule(render).linecap,
            packed=render.store is DrawingStore.PARQUET,
        )

    def layers(self, visible: list[np.ndarray], hidden: list[np.ndarray], visible_flat: list | None = None,
               hidden_flat: list | None = None) -> list[Layer]:
        """Hidden lines first (underneath), then visible lines; groups named for the SVG (``*_flat``: the same
        polylines as flat coordinate lists, converted once for the SVG and the raster)."""
        cap = self.linecap.value
        if self.hidden_style is HiddenStyle.RED:
            hidden_layer = Layer(hidden, HIDDEN_RED, self.hidden_width, None, "hidden", cap, hidden_flat)
        else:
            hidden_layer = Layer(hidden, HIDDEN_GREY, self.hidden_width, HIDDEN_DASH, "hidden", cap, hidden_flat)
        return [hidden_layer, Layer(visible, VISIBLE_COLOR, self.visible_width, None, "visible", cap, visible_flat)]


def split_points(points, lengths: list[int]) -> list:
    """Consecutive pieces of ``points`` (an array or a list) with the given lengths."""
    ends = list(itertools.accumulate(lengths))
    return [points[a:b] for a, b in zip([0] + ends[:-1], ends)]


def to_canvas(lines: list[np.ndarray], framing: Framing, pose: Pose) -> list[np.ndarray]:
    """Projected model-unit polylines to quantised canvas-pixel polylines (one numpy pass for the view)."""
    if not lines:
        return []
    stacked = quantize(framing.to_canvas(pose, np.concatenate(lines)))
    return split_points(stacked, [len(a) for a in lines])


def view_paths(model_id: str, view: str) -> tuple[str, str]:
    """SVG and PNG paths relative to the dataset root."""
    base = f"{DRAWINGS_DIR}/{model_id}/{view}"
    return f"{base}.svg", f"{base}.png"


def render_view(
    model_id: str, pose: Pose, visible: list[np.ndarray], hidden: list[np.ndarray], framing: Framing,
    style: Style, out_dir: str | Path, hlr_method: str,
) -> dict:
    """Write ``drawings/<model_id>/<view>.svg|png`` atomically and return the views.parquet row; with
    ``style.packed`` write no file, the row holds the bytes (``spare_gen.store.packed``)."""
    lines = visible + hidden
    points = np.concatenate(lines) if lines else None  # the view's points, stacked once
    lengths = [len(a) for a in lines]
    if points is None:
        both, pairs, flat, bbox = [], [], [], None
    else:
        stacked = quantize(framing.to_canvas(pose, points))  # one numpy pass for the view
        both = split_points(stacked, lengths)
        pairs = split_points(stacked.tolist(), lengths)  # the row's nested lists, in one conversion
        flat = split_points(stacked.ravel().tolist(), [2 * n for n in lengths])  # for the SVG and the raster
        bbox = [*stacked.min(axis=0).tolist(), *stacked.max(axis=0).tolist()]
    n_vis = len(visible)
    vis_px, hid_px = both[:n_vis], both[n_vis:]
    layers = style.layers(vis_px, hid_px, flat[:n_vis], flat[n_vis:])
    svg_rel, png_rel = view_paths(model_id, pose.name)
    svg = svg_document(layers, style.size).encode("utf-8")
    if not style.packed:
        write_bytes(os.path.join(out_dir, svg_rel), svg)
    png = image = None
    if style.png:
        image = rasterize(layers, style.size)
        png = png_bytes(image)
        if not style.packed:
            write_bytes(os.path.join(out_dir, png_rel), png)
    row = ViewRow(
        model_id=model_id, view=pose.name, status=Status.OK, error="", hlr_method=hlr_method, svg=svg_rel,
        svg_sha256=hashlib.sha256(svg).hexdigest(), png=None if png is None else png_rel,
        png_sha256=None if png is None else hashlib.sha256(png).hexdigest(),
        ink_fraction=None if image is None else ink_fraction(image),
        visible=pairs[:n_vis], hidden=pairs[n_vis:], n_visible=len(vis_px), n_hidden=len(hid_px), bbox2d=bbox,
        extent=0.0 if bbox is None else max(bbox[2] - bbox[0], bbox[3] - bbox[1]),
        center2d=framing.center2d(pose, points),
    ).as_dict()
    if style.packed:
        row.update(packed_row(row, svg, png))
    return row
