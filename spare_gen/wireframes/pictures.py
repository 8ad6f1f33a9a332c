"""Pictures of pool variants for raters: a variant (blue) over its ground truth (black), and alone.

All pictures of one model share one orthographic camera: the isometric pose 2 of the drawing stage
(front-top-right), centred on the ground truth's projected bounding box and scaled so the ground
truth fills ``1 / MARGIN`` of the canvas. The margin keeps most stray points of perturbed or
deformed variants in frame; the canvas clips the rest. The line writers are the drawing stage's
(``spare_gen.drawings.svg`` / ``raster``), so drawings and pool pictures share one renderer, and
equal inputs give equal bytes.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from spare_gen.atomic import write_bytes, write_text
from spare_gen.drawings.poses import pose
from spare_gen.drawings.svg import quantize
from spare_gen.wireframes.model import Wireframe

VIEW = "2"  # SPARE3D isometric pose 2: the paper's conventional isometric view
MARGIN = 1.5  # canvas side = MARGIN x the ground truth's larger projected extent
GT_RGB = (0, 0, 0)
VARIANT_RGB = (0, 90, 255)
LINE_WIDTH_FRACTION = 1 / 256  # line width as a fraction of the canvas side (1.5 px at 384 px)
GT_PICTURE = "gt"


class PictureKind:
    OVERLAY = "overlay"
    ALONE = "alone"


@dataclass(frozen=True)
class Camera:
    """Orthographic camera of one model: canvas px = size/2 + scale * (projected - centre), y down."""

    size: int
    scale: float
    centre: tuple[float, float]

    def to_canvas(self, points: np.ndarray) -> np.ndarray:
        xy = pose(VIEW).project(points)
        out = np.empty_like(xy)
        out[:, 0] = self.size / 2.0 + self.scale * (xy[:, 0] - self.centre[0])
        out[:, 1] = self.size / 2.0 - self.scale * (xy[:, 1] - self.centre[1])
        return out

    @property
    def line_width(self) -> float:
        return max(1.0, self.size * LINE_WIDTH_FRACTION)


def camera_for(gt: Wireframe, size: int, margin: float = MARGIN) -> Camera:
    """The camera fitting ``gt`` (its projected box, times ``margin``) into a ``size`` px square."""
    if gt.n_vertices == 0:
        return Camera(size, float(size), (0.0, 0.0))
    xy = pose(VIEW).project(gt.vertices)
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    extent = float(max(hi - lo)) or 1.0
    return Camera(size, size / (margin * extent), (float((lo[0] + hi[0]) / 2), float((lo[1] + hi[1]) / 2)))


def edge_chains(n_vertices: int, edges: np.ndarray) -> list[list[int]]:
    """Split a graph into vertex paths that pass through degree-2 vertices (cycles closed on their start).

    Drawn as polylines, a discretised curve gets proper line joins instead of a notch at every inner
    point. Deterministic: paths start from the lowest-numbered free end, then cycles from their lowest vertex.
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    incident: list[list[int]] = [[] for _ in range(n_vertices)]
    for k, (a, b) in enumerate(edges.tolist()):
        incident[a].append(k)
        incident[b].append(k)
    used = np.zeros(len(edges), dtype=bool)

    def walk(start: int, first_edge: int) -> list[int]:
        path, v, k = [start], start, first_edge
        while True:
            used[k] = True
            a, b = edges[k]
            v = int(b if a == v else a)
            path.append(v)
            nxt = [e for e in incident[v] if not used[e]] if len(incident[v]) == 2 else []
            if not nxt:
                return path
            k = nxt[0]

    chains = []
    for pass_ends in (True, False):  # open paths from branch points and ends first, then pure cycles
        for v in range(n_vertices):
            if pass_ends and len(incident[v]) == 2:
                continue
            for k in incident[v]:
                if not used[k]:
                    chains.append(walk(v, k))
    return chains


def segments_px(wf: Wireframe, camera: Camera) -> list[np.ndarray]:
    """The edges as canvas-pixel polylines, one per chain of segments joined at degree-2 vertices."""
    if wf.n_edges == 0:
        return []
    px = quantize(camera.to_canvas(wf.vertices))  # the SVG's precision, so SVG and PNG agree
    return [px[chain] for chain in edge_chains(wf.n_vertices, wf.edges)]


def layers_for(camera: Camera, gt: Wireframe | None, variant: Wireframe | None) -> list[tuple]:
    """Drawing layers (polylines, rgb, width px, dash): the ground truth first, the variant on top."""
    layers = []
    if gt is not None:
        layers.append((segments_px(gt, camera), GT_RGB, camera.line_width, None))
    if variant is not None:
        layers.append((segments_px(variant, camera), VARIANT_RGB, camera.line_width, None))
    return layers


def render_svg(layers: Sequence[tuple], size: int) -> str:
    from spare_gen.drawings.svg import svg_document

    return svg_document(layers, size)


def render_png(layers: Sequence[tuple], size: int) -> bytes:
    from spare_gen.drawings.raster import render_png as raster_png

    return raster_png(layers, size)


def write_picture(out_dir: Path, rel_stem: str, layers: Sequence[tuple], size: int) -> dict[str, str]:
    """``<rel_stem>.svg`` and ``.png`` under ``out_dir``; returns their paths relative to ``out_dir``."""
    write_text(out_dir / f"{rel_stem}.svg", render_svg(layers, size))
    write_bytes(out_dir / f"{rel_stem}.png", render_png(layers, size))
    return {"svg": f"{rel_stem}.svg", "png": f"{rel_stem}.png"}


def model_picture_dir(model_id: str) -> str:
    return f"pool/{model_id}"


def write_model_pictures(out_dir: Path, model_id: str, gt: Wireframe, variants: Iterable, size: int) -> dict:
    """Pictures of one ground truth and its variants (objects with ``corruption_id``, ``wireframe``, ``ok``).

    Returns ``{corruption_id: {overlay_svg, overlay_png, alone_svg, alone_png, gt_svg, gt_png}}`` with
    paths relative to ``out_dir``; failed variants get no pictures.
    """
    camera = camera_for(gt, size)
    base = model_picture_dir(model_id)
    gt_paths = write_picture(out_dir, f"{base}/{GT_PICTURE}", layers_for(camera, gt, None), size)
    out = {}
    for v in variants:
        if not v.ok:
            continue
        paths = {"gt_svg": gt_paths["svg"], "gt_png": gt_paths["png"]}
        for kind, layers in ((PictureKind.OVERLAY, layers_for(camera, gt, v.wireframe)),
                             (PictureKind.ALONE, layers_for(camera, None, v.wireframe))):  # fmt: skip
            written = write_picture(out_dir, f"{base}/{v.corruption_id}_{kind}", layers, size)
            paths[f"{kind}_svg"], paths[f"{kind}_png"] = written["svg"], written["png"]
        out[v.corruption_id] = paths
    return out


# --------------------------------------------------------------------------------------- contact sheet

SHEET_LABEL_PX = 18  # height of the label strip above each cell and of the header row


def contact_sheet(cells: dict[tuple[str, str], bytes], rows: Sequence[str], cols: Sequence[str], title: str) -> bytes:
    """A labelled grid of PNG cells (``cells[(row, col)]``, missing cells left blank) as PNG bytes."""
    from PIL import Image, ImageDraw, ImageFont

    images = {key: Image.open(io.BytesIO(data)).convert("RGB") for key, data in cells.items()}
    cell = max((im.size[0] for im in images.values()), default=64)
    head, label = SHEET_LABEL_PX, SHEET_LABEL_PX
    sheet = Image.new("RGB", (len(cols) * cell, head + len(rows) * (cell + label)), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    draw.text((4, 3), title, fill=(0, 0, 0), font=font)
    for r, row in enumerate(rows):
        for c, col in enumerate(cols):
            x, y = c * cell, head + r * (cell + label)
            draw.text((x + 4, y + 3), f"{row} / {col}", fill=(0, 0, 0), font=font)
            if (row, col) in images:
                sheet.paste(images[(row, col)].resize((cell, cell)), (x, y + label))
            draw.rectangle([x, y, x + cell - 1, y + label + cell - 1], outline=(190, 190, 190))
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()
