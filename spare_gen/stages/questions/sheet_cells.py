"""Contact-sheet cells: a drawing, a point cloud or a pose on the pose cube, as each task module lays out its questions."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from spare_gen.canvas.pose_cube import pose_cube, pose_cube_svg
from spare_gen.canvas.svg import color_hex
from spare_gen.canvas.poses import pose
from spare_gen.store.packed import drawing_bytes
from spare_gen.stages.questions.layout import TARGET_POSE

CELL = 160  # px per drawing on the sheet
PAD = 8
SUPERSAMPLE = 3  # the pose cube is drawn this many times larger, then scaled down: smooth lines and dots
CUBE_SCALE = 0.3  # of the cell: the cube's unit frame in px (as the show page's cube)
POINTS = (40, 40, 160)
CUBE_EDGE, CUBE_FACE, CUBE_POSE = (68, 68, 68), (150, 150, 150), (31, 119, 180)  # the show page's #444, #888, #1f77b4


@dataclass
class Cell:
    """One cell of a contact-sheet row; ``correct`` frames it in green."""

    caption: str
    image: Image.Image | None = None  # None: a text-only cell (a blank box with ``text``)
    text: str = ""
    correct: bool = False
    svg: str | None = None  # the same picture as an SVG document (the sheet's SVG twin nests it); None with no image


def drawing_cell(out: Path, caption: str, png: str | None, svg: str | None, correct: bool = False) -> Cell:
    """A cell showing the drawing whose PNG and SVG files are ``png`` and ``svg`` (relative to ``out``)."""
    return Cell(caption, drawing_image(out, png), correct=correct, svg=drawing_svg(out, svg))


def drawing_image(out: Path, rel: str | None) -> Image.Image | None:
    """The drawing at ``rel`` (relative to ``out``) as a CELL x CELL RGB image; None (a blank cell) for none."""
    if rel is None:
        return None
    with Image.open(io.BytesIO(drawing_bytes(out, rel))) as im:
        return im.convert("RGB").resize((CELL, CELL), Image.Resampling.LANCZOS)


def drawing_svg(out: Path, rel: str | None) -> str | None:
    """The drawing's own SVG document at ``rel`` (relative to ``out``); None for none."""
    return None if rel is None else drawing_bytes(out, rel).decode("utf-8")


def _points_px(points: list) -> np.ndarray:
    """The point cloud seen from the target pose, in cell pixels (x right, y down)."""
    xy = pose(str(TARGET_POSE)).project(np.asarray(points, dtype=float))
    if not len(xy):
        return np.zeros((0, 2))
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    scale = (CELL - 2 * PAD) / max(float((hi - lo).max()), 1e-12)
    px = PAD + (xy - lo) * scale
    px[:, 1] = CELL - px[:, 1]
    return px


def points_cell(caption: str, points: list | None, correct: bool = False) -> Cell:
    """A cell showing the point cloud from the target pose (a blank cell for none)."""
    return Cell(caption, points_image(points), correct=correct, svg=None if points is None else points_svg(points))


def points_image(points: list | None) -> Image.Image | None:
    """The point cloud seen from the target pose, as dots; None (a blank cell) for none."""
    if points is None:
        return None
    image = Image.new("RGB", (CELL, CELL), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    for x, y in _points_px(points):
        draw.point((float(x), float(y)), fill=POINTS)
    return image


def points_svg(points: list) -> str:
    """The point cloud as an SVG document of CELL x CELL px: one 1 px square per point, where the PNG sets a pixel."""
    squares = "".join(f"M{x:.0f} {y:.0f}h1v1h-1z" for x, y in np.floor(_points_px(points)))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{CELL}" height="{CELL}" viewBox="0 0 {CELL} {CELL}">'
            f'<rect width="{CELL}" height="{CELL}" fill="#ffffff"/>'
            + (f'<path fill="{color_hex(POINTS)}" d="{squares}"/>' if squares else "") + "</svg>\n")


def pose_cube_cell(caption: str, highlight: tuple[int, ...] | None, correct: bool = False) -> Cell:
    """A cell showing the pose cube with the ``highlight`` poses filled (None: a blank cell)."""
    if highlight is None:
        return Cell(caption)
    return Cell(caption, pose_cube_image(highlight), correct=correct, svg=pose_cube_svg(highlight))


def _dashed(draw: ImageDraw.ImageDraw, a: tuple[float, float], b: tuple[float, float], width: int, dash: float,
            gap: float) -> None:
    length = float(np.hypot(b[0] - a[0], b[1] - a[1]))
    t = 0.0
    while t < length:
        end = min(t + dash, length)
        draw.line([(a[0] + (b[0] - a[0]) * t / length, a[1] + (b[1] - a[1]) * t / length),
                   (a[0] + (b[0] - a[0]) * end / length, a[1] + (b[1] - a[1]) * end / length)],
                  fill=CUBE_EDGE, width=width)
        t = end + gap


def pose_cube_image(highlight: tuple[int, ...]) -> Image.Image:
    """A CELL x CELL picture of the pose cube with the ``highlight`` poses filled, as the ``show`` page draws it."""
    k = SUPERSAMPLE
    size = CELL * k
    image = Image.new("RGB", (size, size), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    cube = pose_cube()
    scale, cx, cy = size * CUBE_SCALE, size / 2, size / 2 + 2 * k

    def px(p: tuple[float, float]) -> tuple[float, float]:
        return cx + scale * p[0], cy - scale * p[1]

    for a, b, hidden in cube.edges:
        if hidden:
            _dashed(draw, px(cube.corners[a]), px(cube.corners[b]), round(1.3 * k), 4.5 * k, 3.5 * k)
        else:
            draw.line([px(cube.corners[a]), px(cube.corners[b])], fill=CUBE_EDGE, width=round(1.3 * k))
    face_font, pose_font = ImageFont.load_default(size=13 * k), ImageFont.load_default(size=12 * k)
    for name, at in cube.faces.items():
        draw.text(px(at), name, fill=CUBE_FACE, font=face_font, anchor="mm")
    r = 9.5 * k
    for name, at in cube.corners.items():
        x, y = px(at)
        on = int(name) in highlight
        draw.ellipse((x - r, y - r, x + r, y + r), fill=CUBE_POSE if on else (255, 255, 255), outline=CUBE_POSE,
                     width=round(1.6 * k))
        draw.text((x, y), name, fill=(255, 255, 255) if on else CUBE_POSE, font=pose_font, anchor="mm")
    return image.resize((CELL, CELL), Image.Resampling.LANCZOS)
