"""Anti-aliased RGB rasters of the same layers as the SVG, and their PNG bytes.

Lines are drawn with aggdraw (the AGG scanline renderer: exact-coverage anti-aliasing, fractional
stroke widths, so a 0.35 px hidden line stays visible as a light stroke; a self-contained PyPI wheel,
deterministic pixels). Coordinates are canvas pixels with the origin at the top-left corner of the
top-left pixel, as in SVG. PNGs are encoded without row filters by zlib, which is three times faster
than Pillow's adaptive-filter encoder on these mostly-white images and gives smaller files.
"""

from __future__ import annotations

import struct
import zlib
from typing import Iterable, Sequence

import aggdraw
import numpy as np

from spare_gen.canvas.svg import as_layers, layer_flat

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_ZLIB_LEVEL = 1  # fastest; level 6 saves ~7% bytes at 3x the time
INK_THRESHOLD = 255  # a pixel is ink when any channel is below this: every non-white pixel


def dash_polyline(points: np.ndarray, pattern: Sequence[float]) -> list[np.ndarray]:
    """The "on" pieces of a polyline under an on/off dash pattern starting at its first point (SVG rule)."""
    pts = np.asarray(points, dtype=float)
    seg = np.hypot(*np.diff(pts, axis=0).T)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    total, period = cum[-1], float(sum(pattern))
    if total <= 0 or period <= 0:
        return []
    bounds = np.concatenate([[0.0], np.cumsum(pattern)])
    pieces = []
    for start in np.arange(0.0, total, period):
        for k in range(0, len(pattern), 2):
            a, b = start + bounds[k], min(start + bounds[k + 1], total)
            if b <= a or a >= total:
                continue
            inner = cum[(cum > a) & (cum < b)]
            s = np.concatenate([[a], inner, [b]])
            pieces.append(np.column_stack([np.interp(s, cum, pts[:, 0]), np.interp(s, cum, pts[:, 1])]))
    return pieces


def rasterize(layers: Iterable, size: int | tuple[int, int], background: Sequence[int] = (255, 255, 255)) -> np.ndarray:
    """(H, W, 3) uint8 image of the layers drawn in order, anti-aliased, on ``background``."""
    width, height = (size, size) if isinstance(size, int) else size
    draw = aggdraw.Draw("RGB", (width, height), tuple(int(c) for c in background))  # own buffer: no PIL copies
    draw.setantialias(True)
    for layer in as_layers(layers):
        pen = aggdraw.Pen(tuple(int(c) for c in layer.color), float(layer.width))
        cap = aggdraw.Brush(tuple(int(c) for c in layer.color)) if layer.linecap == "round" else None
        if not layer.dash and cap is None:  # the usual case: solid lines, coordinates converted once
            for flat in layer_flat(layer):
                if len(flat) >= 4:
                    draw.line(flat, pen)
            continue
        for line in layer.polylines:
            if len(line) < 2:
                continue
            for piece in dash_polyline(line, layer.dash) if layer.dash else (line,):
                draw.line(np.asarray(piece, dtype=float).ravel().tolist(), pen)
                if cap is not None:  # aggdraw pens have butt caps: a disc of the line's width at each end
                    _end_discs(draw, piece, layer.width / 2.0, cap)
    return np.frombuffer(bytearray(draw.tobytes()), dtype=np.uint8).reshape(height, width, 3)


def _end_discs(draw, piece: np.ndarray, radius: float, brush) -> None:
    for x, y in (piece[0], piece[-1]):
        draw.ellipse((float(x) - radius, float(y) - radius, float(x) + radius, float(y) + radius), brush)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(image: np.ndarray) -> bytes:
    """8-bit RGB PNG of an (H, W, 3) uint8 array: no ancillary chunks, so equal pixels give equal bytes."""
    image = np.ascontiguousarray(image, dtype=np.uint8)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) RGB array, got shape {image.shape}")
    height, width = image.shape[:2]
    rows = np.empty((height, width * 3 + 1), dtype=np.uint8)
    rows[:, 0] = 0  # filter byte 0 (None) per row
    rows[:, 1:] = image.reshape(height, width * 3)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(rows, PNG_ZLIB_LEVEL)  # the array's buffer: no bytes copy
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def render_png(layers: Iterable, size: int | tuple[int, int]) -> bytes:
    return png_bytes(rasterize(layers, size))


def ink_mask(image: np.ndarray, threshold: int = INK_THRESHOLD) -> np.ndarray:
    """Pixels with a channel below ``threshold`` (element-wise minimum: 30x faster than ``min(axis=2)``)."""
    image = np.asarray(image)
    return np.minimum(np.minimum(image[..., 0], image[..., 1]), image[..., 2]) < threshold


def ink_fraction(image: np.ndarray) -> float:
    """Share of pixels that are not (nearly) white."""
    mask = ink_mask(image)
    return float(np.count_nonzero(mask)) / mask.size if mask.size else float("nan")  # mean() casts bools to float
