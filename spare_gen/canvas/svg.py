"""SVG documents from layers of canvas-pixel polylines: fixed stroke widths and deterministic bytes.

A layer is ``(polylines, rgb, width_px, dash or None[, name])``; polylines are (k, 2) arrays in canvas
pixels (x right, y down, origin at the top-left corner of the canvas). Coordinates are written in
pixels, so stroke widths are output pixels whatever the model size. Layers are drawn in order (the
first one underneath); a named layer becomes ``<g id="name">``.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import Iterable, NamedTuple, Sequence

import numpy as np

COORD_DECIMALS = 2  # 0.01 px: far below what a raster can show, and short text


class Layer(NamedTuple):
    polylines: Sequence[np.ndarray]
    color: tuple[int, int, int]
    width: float  # stroke width in output pixels
    dash: tuple[float, ...] | None = None  # on/off lengths in pixels, restarting at every polyline
    name: str | None = None
    linecap: str = "butt"  # "round": the SPARE3D preset (stroke-linecap of the group; the raster adds end discs)
    flat: Sequence[list[float]] | None = None  # the polylines as flat [x0, y0, ...] lists, if already made


def as_layers(layers: Iterable) -> list[Layer]:
    """Accept Layer objects or plain ``(polylines, rgb, width, dash[, name])`` tuples."""
    out = []
    for layer in layers:
        layer = layer if isinstance(layer, Layer) else Layer(*layer)
        if layer.width <= 0:
            raise ValueError(f"stroke width must be positive, got {layer.width!r}")
        if layer.dash is not None and (len(layer.dash) == 0 or min(layer.dash) < 0 or sum(layer.dash) <= 0):
            raise ValueError(f"dash pattern must be non-negative lengths with a positive sum, got {layer.dash!r}")
        out.append(layer)
    return out


def quantize(points: np.ndarray) -> np.ndarray:
    """Round to the SVG's precision (and turn -0.0 into 0.0), so SVG, PNG and vectors share one geometry."""
    return np.round(np.asarray(points, dtype=np.float64), COORD_DECIMALS) + 0.0


def _num(v: float) -> str:
    return f"{float(v):g}"


def color_hex(rgb: Sequence[int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*(int(c) for c in rgb))


@lru_cache(maxsize=1024)
def _path_format(n: int) -> str:
    point = f"%.{COORD_DECIMALS}f %.{COORD_DECIMALS}f"
    return "M" + "L".join([point] * n)


def flat_coordinates(polylines: Sequence[np.ndarray]) -> list[list[float]]:
    """Each (k, 2) polyline as a flat ``[x0, y0, x1, y1, ...]`` list: one numpy conversion for all of them
    (per-polyline ``tolist`` calls cost more than the text or the raster they feed)."""
    arrays = [np.asarray(p, dtype=float).reshape(-1, 2) for p in polylines]
    if not arrays:
        return []
    flat = np.concatenate(arrays).ravel().tolist()
    ends = list(itertools.accumulate(2 * len(a) for a in arrays))
    return [flat[a:b] for a, b in zip([0] + ends[:-1], ends)]


def layer_flat(layer: Layer) -> Sequence[list[float]]:
    """The layer's polylines as flat coordinate lists: the ones it carries, else converted once here."""
    return layer.flat if layer.flat is not None else flat_coordinates(layer.polylines)


def _group(layer: Layer) -> str:
    attrs = [f'id="{layer.name}"'] if layer.name else []
    attrs.append(f'stroke="{color_hex(layer.color)}" stroke-width="{_num(layer.width)}"')
    if layer.linecap != "butt":
        attrs.append(f'stroke-linecap="{layer.linecap}"')
    if layer.dash:
        attrs.append(f'stroke-dasharray="{",".join(_num(d) for d in layer.dash)}"')
    paths = "".join(f'<path d="{_path_format(len(f) // 2) % tuple(f)}"/>\n'
                    for f in layer_flat(layer) if len(f) >= 4)
    return f"<g {' '.join(attrs)}>\n{paths}</g>\n"


def svg_document(layers: Iterable, size: int | tuple[int, int], background: Sequence[int] | None = (255, 255, 255)) -> str:
    """A standalone SVG (``viewBox`` in canvas pixels) drawing the layers in order over a background."""
    width, height = (size, size) if isinstance(size, int) else size
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">\n'
    )
    body = f'<rect width="{width}" height="{height}" fill="{color_hex(background)}"/>\n' if background else ""
    body += '<g fill="none" stroke-linecap="butt" stroke-linejoin="miter">\n'
    body += "".join(_group(layer) for layer in as_layers(layers))
    return head + body + "</g>\n</svg>\n"


# ------------------------------------------------------------------------------------------ sheets of pictures
# A contact sheet's vector twin is built from its cells' own SVG documents (a drawing's file, the pose cube), each
# nested at its cell: the lines stay lines, nothing is rasterised.

_ROOT = re.compile(r"<svg\b[^>]*>")
_ATTR = re.compile(r'\b(viewBox|width|height)="([^"]*)"')
_ID = re.compile(r'\bid="([^"]*)"')
SHEET_FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"


def svg_size(document: str) -> tuple[float, float]:
    """(width, height) of an SVG document: its viewBox's, else its width and height attributes (px)."""
    attrs = dict(_ATTR.findall(_root(document).group(0)))
    if "viewBox" in attrs:
        _, _, w, h = (float(v) for v in attrs["viewBox"].replace(",", " ").split())
        return w, h
    return float(attrs["width"].removesuffix("px")), float(attrs["height"].removesuffix("px"))


def _root(document: str) -> re.Match:
    root = _ROOT.search(document)
    if root is None:
        raise ValueError(f"not an SVG document (no <svg> element): {document[:60]!r}")
    return root


def nested(document: str, x: float, y: float, width: float, height: float, prefix: str) -> str:
    """``document`` (a standalone SVG) as an element of a larger SVG, stretched over the box (x, y, width, height)
    as a raster cell is resized; its ids get ``prefix`` so that ids stay unique in the sheet."""
    root = _root(document)
    w, h = svg_size(document)
    view = dict(_ATTR.findall(root.group(0))).get("viewBox", f"0 0 {_num(w)} {_num(h)}")  # its own origin
    head = (f'<svg x="{_num(x)}" y="{_num(y)}" width="{_num(width)}" height="{_num(height)}" viewBox="{view}" '
            'preserveAspectRatio="none">')
    body = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', document[root.end():])
    return head + body.strip() + "\n"


def sheet_text(x: float, y: float, text: str, size: float, rgb: Sequence[int], anchor: str = "start") -> str:
    """A line of text whose top is at ``y`` (``anchor`` middle: centred on (x, y)), as a raster sheet writes it."""
    from xml.sax.saxutils import escape

    baseline = y + (0.35 if anchor == "middle" else 0.8) * size
    return (f'<text x="{_num(x)}" y="{_num(round(baseline, 2))}" font-size="{_num(size)}" font-family="{SHEET_FONT}" '
            f'fill="{color_hex(rgb)}" text-anchor="{anchor}" xml:space="preserve">{escape(text)}</text>\n')


def sheet_document(width: int, height: int, body: str, background: Sequence[int]) -> str:
    """A standalone SVG of ``width`` x ``height`` px: ``body`` over the background colour."""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">\n'
            f'<rect width="{width}" height="{height}" fill="{color_hex(background)}"/>\n{body}</svg>\n')
