"""Contact sheets ``<out>/preview/<task>.png``: a few questions per task, correct answer framed in green."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageDraw

from spare_gen.atomic import write_bytes
from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.schema import PREVIEW_DIR, QuestionCommon
from spare_gen.stages.questions.sheet_cells import CELL, PAD, Cell, drawing_image
from spare_gen.stages.questions.tasks import TASK_SPECS

QUESTIONS_PER_SHEET = 3
CAPTION = 14
GREEN = (0, 170, 0)
FRAME = 4


def _cells(out: Path, task: TaskName, row: QuestionCommon) -> list[Cell]:
    cells = [Cell(caption, drawing_image(out, row.drawing(prefix, "png"))) for caption, prefix in
             (("F", "front"), ("R", "right"), ("T", "top"))]
    return cells + TASK_SPECS[task].sheet_cells(out, row)


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


def contact_sheet(out: Path, task: TaskName, rows: list[QuestionCommon]) -> bytes | None:
    """PNG bytes of the sheet for ``rows`` (the first few are shown); None when there are no rows."""
    shown = rows[:QUESTIONS_PER_SHEET]
    if not shown:
        return None
    sheet = _paint([(f"{r.question_id}  model {r.model_id}", _cells(out, task, r)) for r in shown])
    buf = io.BytesIO()
    sheet.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def write_contact_sheets(out: Path, written: dict[str, dict[str, list[QuestionCommon]]]) -> list[Path]:
    """One sheet per task, from its test split first (then val, then train)."""
    paths = []
    for task, splits in written.items():
        rows = [r for s in reversed(SPLITS) for r in splits.get(s, [])]
        data = contact_sheet(Path(out), TaskName(task), rows)
        if data is not None:
            paths.append(write_bytes(Path(out) / PREVIEW_DIR / f"{task}.png", data))
    return paths
