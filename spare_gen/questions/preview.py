"""Contact sheets ``<out>/preview/<task>.png``: a few questions per task, correct answer framed in green."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from spare_gen.atomic import write_bytes
from spare_gen.config.schema import TaskName
from spare_gen.drawings.poses import pose
from spare_gen.questions.tasks import SPLITS, TARGET_POSE

PREVIEW_DIR = "preview"
QUESTIONS_PER_SHEET = 3
CELL = 160  # px per drawing on the sheet
PAD = 8
CAPTION = 14
GREEN = (0, 170, 0)
FRAME = 4


@dataclass
class Cell:
    caption: str
    image: Image.Image | None = None  # None: a text-only cell
    text: str = ""
    correct: bool = False


def _drawing(out: Path, rel: str) -> Image.Image:
    with Image.open(out / rel) as im:
        return im.convert("RGB").resize((CELL, CELL), Image.LANCZOS)


def _points_image(points: list) -> Image.Image:
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


def _cells(out: Path, task: TaskName, row: dict) -> list[Cell]:
    cells = [Cell(name, _drawing(out, row[f"{key}_png"])) for name, key in (("F", "front"), ("R", "right"), ("T", "top"))]
    if task is TaskName.ISOMETRIC_TO_POSE:
        cells.append(Cell("input", _drawing(out, row["iso_png"])))
        cells += [Cell(f"choice {i}", text=f"pose {p}", correct=i == row["answer"])
                  for i, p in enumerate(row["choice_poses"])]
    elif task in (TaskName.THREE_VIEW_TO_ISOMETRIC, TaskName.POSE_TO_ISOMETRIC):
        if task is TaskName.POSE_TO_ISOMETRIC:
            cells.append(Cell("input", text=f"pose {row['pose']}"))
        cells += [Cell(f"choice {i}", _drawing(out, p), correct=i == row["answer"])
                  for i, p in enumerate(row["candidate_png"])]
    elif task is TaskName.ISOMETRIC_VIEW_GENERATION:
        cells.append(Cell("target (pose 2)", _drawing(out, row["target_png"]), correct=True))
    else:
        cells.append(Cell(f"target ({row['n_points']} points)", _points_image(row["points"]), correct=True))
    return cells


def _paint(cells_by_row: list[tuple[str, list[Cell]]]) -> Image.Image:
    n_cols = max(len(c) for _, c in cells_by_row)
    row_h = CAPTION * 2 + CELL + PAD
    sheet = Image.new("RGB", (PAD + n_cols * (CELL + PAD), PAD + len(cells_by_row) * row_h), (235, 235, 235))
    draw = ImageDraw.Draw(sheet)
    for r, (title, cells) in enumerate(cells_by_row):
        top = PAD + r * row_h
        draw.text((PAD, top), title, fill=(0, 0, 0))
        for c, cell in enumerate(cells):
            x, y = PAD + c * (CELL + PAD), top + 2 * CAPTION
            draw.text((x, top + CAPTION), cell.caption, fill=(60, 60, 60))
            if cell.image is not None:
                sheet.paste(cell.image, (x, y))
            else:
                draw.rectangle((x, y, x + CELL - 1, y + CELL - 1), fill=(255, 255, 255))
                draw.text((x + CELL // 2, y + CELL // 2), cell.text, fill=(0, 0, 0), anchor="mm")
            if cell.correct:
                draw.rectangle((x - 2, y - 2, x + CELL + 1, y + CELL + 1), outline=GREEN, width=FRAME)
    return sheet


def contact_sheet(out: Path, task: TaskName, rows: list[dict]) -> bytes | None:
    """PNG bytes of the sheet for ``rows`` (the first few are shown); None when there are no rows."""
    shown = rows[:QUESTIONS_PER_SHEET]
    if not shown:
        return None
    sheet = _paint([(f"{r['question_id']}  model {r['model_id']}", _cells(out, task, r)) for r in shown])
    buf = io.BytesIO()
    sheet.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def write_contact_sheets(out: Path, written: dict[str, dict[str, list[dict]]]) -> list[Path]:
    """One sheet per task, from its test split first (then val, then train)."""
    paths = []
    for task, splits in written.items():
        rows = [r for s in reversed(SPLITS) for r in splits.get(s, [])]
        data = contact_sheet(Path(out), TaskName(task), rows)
        if data is not None:
            paths.append(write_bytes(Path(out) / PREVIEW_DIR / f"{task}.png", data))
    return paths
