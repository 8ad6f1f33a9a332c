"""Contact-sheet cells: a drawing, a point cloud or a caption, as each task module lays out its questions."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from spare_gen.canvas.poses import pose
from spare_gen.store.packed import drawing_bytes
from spare_gen.stages.questions.layout import TARGET_POSE

CELL = 160  # px per drawing on the sheet
PAD = 8


@dataclass
class Cell:
    """One cell of a contact-sheet row; ``correct`` frames it in green."""

    caption: str
    image: Image.Image | None = None  # None: a text-only cell
    text: str = ""
    correct: bool = False


def drawing_image(out: Path, rel: str) -> Image.Image:
    """The drawing at ``rel`` (relative to ``out``) as a CELL x CELL RGB image."""
    with Image.open(io.BytesIO(drawing_bytes(out, rel))) as im:
        return im.convert("RGB").resize((CELL, CELL), Image.LANCZOS)


def points_image(points: list) -> Image.Image:
    """The point cloud seen from the target pose, as dots."""
    image = Image.new("RGB", (CELL, CELL), (255, 255, 255))
    xy = pose(str(TARGET_POSE)).project(np.asarray(points, dtype=float))
    if len(xy):
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        scale = (CELL - 2 * PAD) / max(float((hi - lo).max()), 1e-12)
        px = PAD + (xy - lo) * scale
        px[:, 1] = CELL - px[:, 1]
        draw = ImageDraw.Draw(image)
        for x, y in px:
            draw.point((float(x), float(y)), fill=(40, 40, 160))
    return image
