"""Pictures of pool candidates for raters: honest about what is judged, silent about what was done.

Every picture shows the same two orthographic views side by side (:data:`VIEWS`: trimetric, from
front-right-top and from back-left-top), so an arc or a floating fragment seen edge-on in one view is
readable in the other, over a legend strip. The candidate (a corruption
or a method's prediction) is drawn in blue over the ground truth in black; every vertex has a small
square marker (a perturbed vertex's copies and duplicate vertices show, as every metric counts them)
and isolated vertices (no edge) get a larger orange ring.

All pictures of one model share one camera per view: it frames the ground truth's bounding box padded
by :data:`~spare_gen.rating.corruptions.MAX_SHIFT` diagonals on every side, so no vertex of any
corruption leaves the canvas (a method's prediction may; it is clipped). File names carry only
the candidate's opaque id (:mod:`spare_gen.stages.pool.corruptions`); type and severity live only in
corruptions.parquet and pairs.parquet. Each candidate's and each ground truth's geometry is also
written as a small JSON file (:data:`GEOMETRY_FORMAT`) for 3D viewers. The line writers are the drawing
stage's (``spare_gen.canvas.svg`` / ``raster``); equal inputs give equal bytes.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from spare_gen.atomic import write_bytes, write_text
from spare_gen.canvas.poses import Pose
from spare_gen.canvas.raster import png_bytes, rasterize
from spare_gen.canvas.svg import nested, quantize, sheet_document, sheet_text, svg_document, svg_size
from spare_gen.rating.corruptions import MAX_SHIFT, model_size
from spare_gen.wireframe import Wireframe



def _view(name: str, towards_viewer: tuple[float, float, float], image_right: tuple[float, float, float]) -> Pose:
    n, x = np.asarray(towards_viewer, float), np.asarray(image_right, float)
    return Pose(name, tuple((n / np.linalg.norm(n)).tolist()), tuple((x / np.linalg.norm(x)).tolist()))


# Two trimetric views from opposite sides, both from above (z up on the image). Not isometric: an
# isometric view of an axis-aligned part puts a hidden corner exactly on a visible one and lines on
# lines; unequal angles keep them apart, and the second view shows what the first hides.
VIEWS = (
    _view("front-right", (1.0, -1.6, 0.9), (1.6, 1.0, 0.0)),
    _view("back-left", (-1.3, 1.0, 0.8), (-1.0, -1.3, 0.0)),
)
FRAME_PAD = 1.04  # the padded box fills 1 / FRAME_PAD of each view
GT_RGB = (0, 0, 0)
CORRUPTION_RGB = (0, 90, 255)
ISOLATED_RGB = (255, 120, 0)
SEPARATOR_RGB = (200, 200, 200)
LINE_WIDTH_FRACTION = 1 / 256  # line width as a fraction of the view side (1.5 px at 384 px)
MARKER_FRACTION = 1 / 128  # vertex marker side (3 px at 384 px)
ISOLATED_FRACTION = 1 / 48  # isolated-vertex ring diameter (8 px at 384 px)
LEGEND_ROW_PX = 18  # height of one row of the legend strip under the views (it wraps on narrow pictures)
LEGEND_SYMBOL_PX, LEGEND_CHAR_PX, LEGEND_GAP_PX = 22, 6, 14  # room for a legend item's symbol, letters, gap
GT_PICTURE = "gt"
GEOMETRY_DECIMALS = 6

GEOMETRY_FORMAT = """\
Geometry files (`pool/<model_id>/gt.json` and `pool/<model_id>/<corruption_id>.json`, paths in the
`gt_json` / `geometry_json` columns of corruptions.parquet): UTF-8 JSON
    {"vertices": [[x, y, z], ...], "edges": [[i, j], ...], "vertex_kinds": [0 | 1 | 2 | 3, ...]}
in the ground truth's normalised coordinates (bounding-box centre at 0, diagonal 1; model units =
vertices * scale + centre, with scale and centre from wireframes.parquet); edges are undirected pairs
of 0-based vertex indices; kind 0 = corner (B-rep vertex), 1 = inner point of a curved edge; a house's
vertices (models.source = "houses") are 0 = wall, ground or chimney corner, 2 = roof ridge, 3 = eave.
"""


class PictureKind:
    OVERLAY = "overlay"
    ALONE = "alone"


@dataclass(frozen=True)
class Camera:
    """Orthographic camera of one view: canvas px = offset + size/2 + scale * (projected - centre), y down."""

    view: Pose
    size: int
    scale: float
    centre: tuple[float, float]
    offset_x: float = 0.0  # where this view starts in a side-by-side picture

    def to_canvas(self, points: np.ndarray) -> np.ndarray:
        xy = self.view.project(points)
        out = np.empty_like(xy)
        out[:, 0] = self.offset_x + self.size / 2.0 + self.scale * (xy[:, 0] - self.centre[0])
        out[:, 1] = self.size / 2.0 - self.scale * (xy[:, 1] - self.centre[1])
        return out

    @property
    def line_width(self) -> float:
        return max(1.0, self.size * LINE_WIDTH_FRACTION)

    @property
    def marker_side(self) -> float:
        return max(2.0, self.size * MARKER_FRACTION)

    @property
    def ring_diameter(self) -> float:
        return max(6.0, self.size * ISOLATED_FRACTION)


def padded_box(gt: Wireframe) -> np.ndarray:
    """The 8 corners of the ground truth's bounding box grown by MAX_SHIFT diagonals on every side."""
    if gt.n_vertices == 0:
        return np.zeros((8, 3))
    pad = MAX_SHIFT * model_size(gt)
    lo, hi = gt.vertices.min(axis=0) - pad, gt.vertices.max(axis=0) + pad
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def cameras_for(gt: Wireframe, size: int, views: Sequence[Pose] = VIEWS) -> list[Camera]:
    """One camera per view, side by side, all at one scale: the largest that fits the padded box in every view."""
    box = padded_box(gt)
    extents, centres = [], []
    for view in views:
        xy = view.project(box)
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        extents.append(float(max(hi - lo)) or 1.0)
        centres.append((float((lo[0] + hi[0]) / 2), float((lo[1] + hi[1]) / 2)))
    scale = size / (FRAME_PAD * max(extents))
    return [Camera(v, size, scale, c, float(k * size)) for k, (v, c) in enumerate(zip(views, centres))]


def canvas_size(size: int, n_views: int = len(VIEWS), gt: bool = True, corruption: bool = True) -> tuple[int, int]:
    return (size * n_views, size + legend_height(size * n_views, gt, corruption))


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


def square(centre: np.ndarray, side: float) -> np.ndarray:
    h = side / 2.0
    return quantize(centre + np.array([[-h, -h], [h, -h], [h, h], [-h, h], [-h, -h]]))


def ring(centre: np.ndarray, diameter: float, corners: int = 12) -> np.ndarray:
    t = np.linspace(0.0, 2 * np.pi, corners + 1)
    return quantize(centre + diameter / 2.0 * np.c_[np.cos(t), np.sin(t)])


def isolated_vertices(wf: Wireframe) -> np.ndarray:
    """Indices of vertices without an edge (a self-loop does not count as an edge)."""
    edges = wf.edges[wf.edges[:, 0] != wf.edges[:, 1]]
    return np.flatnonzero(np.bincount(edges.ravel(), minlength=wf.n_vertices) == 0)


def wireframe_layers(wf: Wireframe, camera: Camera, rgb: tuple[int, int, int]) -> list[tuple]:
    """Edges, a square per vertex, and an orange ring around each isolated vertex."""
    px = camera.to_canvas(wf.vertices)
    layers = [(segments_px(wf, camera), rgb, camera.line_width, None),
              ([square(p, camera.marker_side) for p in px], rgb, 1.0, None)]  # fmt: skip
    lone = isolated_vertices(wf)
    if len(lone):
        layers.append(([ring(px[i], camera.ring_diameter) for i in lone], ISOLATED_RGB, 1.5, None))
    return layers


def layers_for(cameras: Sequence[Camera], gt: Wireframe | None, corruption: Wireframe | None) -> list[tuple]:
    """Drawing layers of every view: the ground truth first, the candidate on top, a separator between views."""
    layers = []
    for camera in cameras:
        if gt is not None:
            layers += wireframe_layers(gt, camera, GT_RGB)
        if corruption is not None:
            layers += wireframe_layers(corruption, camera, CORRUPTION_RGB)
    separators = [np.array([[c.offset_x, 0.0], [c.offset_x, float(c.size)]]) for c in cameras[1:]]
    if separators:
        layers.append((separators, SEPARATOR_RGB, 1.0, None))
    return layers


def legend_items(gt: bool, corruption: bool) -> list[tuple[tuple[int, int, int], str, str]]:
    """(colour, symbol, text) of the legend; symbol is 'line', 'square' or 'ring'."""
    items = []
    if gt:
        items.append((GT_RGB, "line", "ground truth"))
    if corruption:
        items.append((CORRUPTION_RGB, "line", "candidate"))
    items.append((CORRUPTION_RGB if corruption else GT_RGB, "square", "vertex"))
    items.append((ISOLATED_RGB, "ring", "isolated vertex"))
    return items


def legend_positions(width: int, gt: bool, corruption: bool) -> tuple[list[tuple[float, float]], int]:
    """Top-left corner of each legend item, flowing left to right and wrapping to fit ``width``; and the rows."""
    positions, x, row = [], 6.0, 0
    for _, _, text in legend_items(gt, corruption):
        item = LEGEND_SYMBOL_PX + LEGEND_CHAR_PX * len(text) + LEGEND_GAP_PX
        if x > 6.0 and x + item > width:
            x, row = 6.0, row + 1
        positions.append((x, row * LEGEND_ROW_PX))
        x += item
    return positions, row + 1


def legend_height(width: int, gt: bool = True, corruption: bool = True) -> int:
    return legend_positions(width, gt, corruption)[1] * LEGEND_ROW_PX + 4


def legend(size: int, width: int, gt: bool, corruption: bool) -> tuple[list[tuple], list[tuple[float, float, str]]]:
    """The legend strip under the views: symbols as drawing layers, labels as (x, y centre, text)."""
    layers = [([np.array([[0.0, float(size)], [float(width), float(size)]])], SEPARATOR_RGB, 1.0, None)]
    labels = []
    positions, _ = legend_positions(width, gt, corruption)
    for (rgb, symbol, text), (x, dy) in zip(legend_items(gt, corruption), positions):
        y = size + dy + LEGEND_ROW_PX / 2.0 + 2.0
        centre = np.array([x + 8.0, y])
        if symbol == "line":
            layers.append(([np.array([[x, y], [x + 16.0, y]])], rgb, 1.5, None))
        elif symbol == "square":
            layers.append(([square(centre, 4.0)], rgb, 1.0, None))
        else:
            layers.append(([ring(centre, 8.0)], rgb, 1.5, None))
        labels.append((x + LEGEND_SYMBOL_PX, y, text))
    return layers, labels


def render_svg(layers: Sequence[tuple], labels: Sequence[tuple], canvas: tuple[int, int]) -> str:
    text = "".join(
        f'<text x="{x:g}" y="{y + 4:g}" font-family="sans-serif" font-size="11" fill="#000000">{t}</text>\n'
        for x, y, t in labels
    )
    return svg_document(layers, canvas).replace("</svg>\n", f"<g>\n{text}</g>\n</svg>\n")


def render_png(layers: Sequence[tuple], labels: Sequence[tuple], canvas: tuple[int, int]) -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.fromarray(rasterize(layers, canvas))
    draw, font = ImageDraw.Draw(image), ImageFont.load_default()
    for x, y, t in labels:
        draw.text((x, y - 6), t, fill=(0, 0, 0), font=font)
    return png_bytes(np.asarray(image))


def write_picture(
    out_dir: Path, rel_stem: str, cameras: Sequence[Camera], gt: Wireframe | None, corruption: Wireframe | None
) -> dict[str, str]:
    """``<rel_stem>.svg`` and ``.png`` (views side by side over a legend); paths relative to ``out_dir``."""
    canvas = canvas_size(cameras[0].size, len(cameras), gt is not None, corruption is not None)
    legend_layers, labels = legend(cameras[0].size, canvas[0], gt is not None, corruption is not None)
    layers = layers_for(cameras, gt, corruption) + legend_layers
    write_text(out_dir / f"{rel_stem}.svg", render_svg(layers, labels, canvas))
    write_bytes(out_dir / f"{rel_stem}.png", render_png(layers, labels, canvas))
    return {"svg": f"{rel_stem}.svg", "png": f"{rel_stem}.png"}


def geometry_json(wf: Wireframe) -> str:
    """The documented geometry file (:data:`GEOMETRY_FORMAT`) of a wireframe, compact and deterministic."""
    vertices = np.round(wf.vertices, GEOMETRY_DECIMALS) + 0.0
    body = {"vertices": vertices.tolist(), "edges": wf.edges.tolist(), "vertex_kinds": wf.kinds.tolist()}
    return json.dumps(body, separators=(",", ":")) + "\n"


def model_picture_dir(model_id: str) -> str:
    return f"pool/{model_id}"


def write_model_pictures(out_dir: Path, model_id: str, gt: Wireframe, corruptions: Iterable, size: int) -> dict:
    """Pictures and geometry files of one ground truth and its candidates (objects with ``corruption_id``,
    ``wireframe``, ``ok``).

    Returns ``{corruption_id: {overlay_svg, overlay_png, alone_svg, alone_png, gt_svg, gt_png,
    geometry_json, gt_json}}`` with paths relative to ``out_dir``; failed candidates get none.
    """
    cameras = cameras_for(gt, size)
    base = model_picture_dir(model_id)
    gt_paths = write_picture(out_dir, f"{base}/{GT_PICTURE}", cameras, gt, None)
    gt_json = f"{base}/{GT_PICTURE}.json"
    write_text(out_dir / gt_json, geometry_json(gt))
    out = {}
    for v in corruptions:
        if not v.ok:
            continue
        paths = {"gt_svg": gt_paths["svg"], "gt_png": gt_paths["png"], "gt_json": gt_json}
        for kind, shown_gt in ((PictureKind.OVERLAY, gt), (PictureKind.ALONE, None)):
            written = write_picture(out_dir, f"{base}/{v.corruption_id}_{kind}", cameras, shown_gt, v.wireframe)
            paths[f"{kind}_svg"], paths[f"{kind}_png"] = written["svg"], written["png"]
        paths["geometry_json"] = f"{base}/{v.corruption_id}.json"
        write_text(out_dir / paths["geometry_json"], geometry_json(v.wireframe))
        out[v.corruption_id] = paths
    return out


# ------------------------------------------------------------------------------------- calibration checks


def outside_canvas(wf: Wireframe, cameras: Sequence[Camera]) -> int:
    """How many vertices of ``wf`` fall outside their view's square in at least one view."""
    out = np.zeros(wf.n_vertices, dtype=bool)
    for c in cameras:
        px = c.to_canvas(wf.vertices)
        x, y = px[:, 0] - c.offset_x, px[:, 1]
        out |= (x < 0) | (x > c.size) | (y < 0) | (y > c.size)
    return int(out.sum())


def visible_difference_px(gt: Wireframe, corruption: Wireframe, cameras: Sequence[Camera], level: int = 128) -> int:
    """Pixels (all views) whose value differs by at least ``level`` of 255 between the ground truth and the
    candidate drawn alike (one colour, edges and vertex markers): how visibly the candidate differs."""
    canvas = (cameras[0].size * len(cameras), cameras[0].size)
    a = rasterize([layer for c in cameras for layer in wireframe_layers(gt, c, GT_RGB)], canvas)
    b = rasterize([layer for c in cameras for layer in wireframe_layers(corruption, c, GT_RGB)], canvas)
    return int((np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2) >= level).sum())


# --------------------------------------------------------------------------------------- contact sheet

SHEET_TEXT_SHARE = 1 / 28  # the labels' text height as a share of a cell's width (27 px on the pool's 768 px cells)
SHEET_TEXT_MIN_PX = 12


def contact_sheet(cells: dict[tuple[str, str], bytes], rows: Sequence[str], cols: Sequence[str], title: str) -> bytes:
    """A labelled grid of PNG cells (``cells[(row, col)]``, missing cells left blank) as PNG bytes; the title and
    labels are sized to the cells, so they read at the size the sheet is looked at."""
    from PIL import Image, ImageDraw, ImageFont

    images = {key: Image.open(io.BytesIO(data)).convert("RGB") for key, data in cells.items()}
    cell_w = max((im.size[0] for im in images.values()), default=64)
    cell_h = max((im.size[1] for im in images.values()), default=64)
    text = max(SHEET_TEXT_MIN_PX, round(cell_w * SHEET_TEXT_SHARE))
    head, label = round(1.5 * text) + 8, text + 8  # the header row (the title) and the strip above each cell
    sheet = Image.new("RGB", (len(cols) * cell_w, head + len(rows) * (cell_h + label)), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default(size=text)  # Pillow's own TrueType face: the same glyphs on every machine
    draw.text((6, 4), title, fill=(0, 0, 0), font=ImageFont.load_default(size=round(1.4 * text)))
    for r, row in enumerate(rows):
        for c, col in enumerate(cols):
            x, y = c * cell_w, head + r * (cell_h + label)
            draw.text((x + 6, y + 3), f"{row} / {col}", fill=(0, 0, 0), font=font)
            if (row, col) in images:
                sheet.paste(images[(row, col)].resize((cell_w, cell_h)), (x, y + label))
            draw.rectangle([x, y, x + cell_w - 1, y + label + cell_h - 1], outline=(190, 190, 190))
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def contact_sheet_svg(cells: dict[tuple[str, str], str], rows: Sequence[str], cols: Sequence[str], title: str) -> str:
    """The vector twin of :func:`contact_sheet`: the same grid, texts and cell boxes at the same pixels, each cell's
    own SVG document (``cells[(row, col)]``) nested in its box."""
    sizes = [svg_size(doc) for doc in cells.values()]
    cell_w = round(max((w for w, _ in sizes), default=64))
    cell_h = round(max((h for _, h in sizes), default=64))
    text = max(SHEET_TEXT_MIN_PX, round(cell_w * SHEET_TEXT_SHARE))
    head, label = round(1.5 * text) + 8, text + 8
    body = [sheet_text(6, 4, title, round(1.4 * text), (0, 0, 0))]
    for r, row in enumerate(rows):
        for c, col in enumerate(cols):
            x, y = c * cell_w, head + r * (cell_h + label)
            body.append(sheet_text(x + 6, y + 3, f"{row} / {col}", text, (0, 0, 0)))
            if (row, col) in cells:
                body.append(nested(cells[(row, col)], x, y + label, cell_w, cell_h, f"c{r}-{c}-"))
            body.append(f'<rect x="{x + 0.5}" y="{y + 0.5}" width="{cell_w - 1}" height="{label + cell_h - 1}" '
                        'fill="none" stroke="#bebebe" stroke-width="1"/>\n')  # the PNG's 1 px box, on its pixels
    return sheet_document(len(cols) * cell_w, head + len(rows) * (cell_h + label), "".join(body), (255, 255, 255))
