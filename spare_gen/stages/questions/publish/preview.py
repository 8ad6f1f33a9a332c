"""Contact sheets ``<out>/preview/<task>.png`` and their vector twins ``<task>.svg``: a few questions per task,
correct answer framed in green.

The SVG lays out the same cells at the same pixels, each cell's own SVG nested there (a drawing's file, the pose
cube, the point cloud as 1 px squares), so its lines are the drawings' lines, not pixels."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageDraw

from spare_gen.atomic import write_bytes, write_text
from spare_gen.canvas.svg import color_hex, nested, sheet_document, sheet_text
from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.schema import PREVIEW_DIR, QuestionCommon
from spare_gen.stages.questions.sheet_cells import CELL, PAD, Cell, drawing_cell
from spare_gen.stages.questions.tasks import TASK_SPECS

QUESTIONS_PER_SHEET = 3
CAPTION = 14
GREEN = (0, 170, 0)
FRAME = 4
BACKGROUND, TITLE, CAPTION_INK, BLANK = (235, 235, 235), (0, 0, 0), (60, 60, 60), (255, 255, 255)
TEXT_PX = 10  # Pillow's default face, as the PNG writes its text


def _cells(out: Path, task: TaskName, row: QuestionCommon) -> list[Cell]:
    cells = [drawing_cell(out, caption, row.drawing(prefix, "png"), row.drawing(prefix, "svg")) for caption, prefix in
             (("F", "front"), ("R", "right"), ("T", "top"))]
    return cells + TASK_SPECS[task].sheet_cells(out, row)


def _size(cells_by_row: list[tuple[str, list[Cell]]]) -> tuple[int, int, int]:
    """(width, height, row height) of the sheet in px."""
    n_cols = max(len(c) for _, c in cells_by_row)
    row_h = CAPTION * 2 + CELL + PAD
    return PAD + n_cols * (CELL + PAD), PAD + len(cells_by_row) * row_h, row_h


def _places(cells_by_row: list[tuple[str, list[Cell]]], row_h: int):
    """(row title or None, cell or None, x, y, top of the row) of each thing on the sheet, in drawing order."""
    for r, (title, cells) in enumerate(cells_by_row):
        top = PAD + r * row_h
        yield title, None, PAD, top, top
        for c, cell in enumerate(cells):
            yield None, cell, PAD + c * (CELL + PAD), top + 2 * CAPTION, top


def _paint(cells_by_row: list[tuple[str, list[Cell]]]) -> Image.Image:
    width, height, row_h = _size(cells_by_row)
    sheet = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    for title, cell, x, y, top in _places(cells_by_row, row_h):
        if cell is None:
            draw.text((x, y), title, fill=TITLE)
            continue
        draw.text((x, top + CAPTION), cell.caption, fill=CAPTION_INK)
        if cell.image is not None:
            sheet.paste(cell.image, (x, y))
        else:
            draw.rectangle((x, y, x + CELL - 1, y + CELL - 1), fill=BLANK)
            draw.text((x + CELL // 2, y + CELL // 2), cell.text, fill=(0, 0, 0), anchor="mm")
        if cell.correct:
            draw.rectangle((x - 2, y - 2, x + CELL + 1, y + CELL + 1), outline=GREEN, width=FRAME)
    return sheet


def _paint_svg(cells_by_row: list[tuple[str, list[Cell]]]) -> str:
    """The same sheet as SVG: each cell's own SVG nested at its place, the texts and frames as elements."""
    width, height, row_h = _size(cells_by_row)
    body = []
    for k, (title, cell, x, y, top) in enumerate(_places(cells_by_row, row_h)):
        if cell is None:
            body.append(sheet_text(x, y, title, TEXT_PX, TITLE))
            continue
        body.append(sheet_text(x, top + CAPTION, cell.caption, TEXT_PX, CAPTION_INK))
        if cell.svg is not None:
            body.append(nested(cell.svg, x, y, CELL, CELL, f"c{k}-"))
        else:
            body.append(f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{color_hex(BLANK)}"/>\n')
            if cell.text:
                body.append(sheet_text(x + CELL // 2, y + CELL // 2, cell.text, TEXT_PX, (0, 0, 0), "middle"))
        if cell.correct:  # the PNG's frame: 4 px from 2 px outside the cell to 2 px inside
            body.append(f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="none" '
                        f'stroke="{color_hex(GREEN)}" stroke-width="{FRAME}"/>\n')
    return sheet_document(width, height, "".join(body), BACKGROUND)


def _shown(out: Path, task: TaskName, rows: list[QuestionCommon]) -> list[tuple[str, list[Cell]]]:
    return [(f"{r.question_id}  model {r.model_id}", _cells(out, task, r)) for r in rows[:QUESTIONS_PER_SHEET]]


def contact_sheet(out: Path, task: TaskName, rows: list[QuestionCommon]) -> bytes | None:
    """PNG bytes of the sheet for ``rows`` (the first few are shown); None when there are no rows."""
    shown = _shown(out, task, rows)
    return _png(_paint(shown)) if shown else None


def _png(sheet: Image.Image) -> bytes:
    buf = io.BytesIO()
    sheet.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def write_contact_sheets(out: Path, written: dict[str, dict[str, list[QuestionCommon]]]) -> list[Path]:
    """One sheet per task, from its test split first (then val, then train): ``<task>.png`` and ``<task>.svg``."""
    paths = []
    for task, splits in written.items():
        rows = [r for s in reversed(SPLITS) for r in splits.get(s, [])]
        shown = _shown(Path(out), TaskName(task), rows)
        if shown:
            paths.append(write_bytes(Path(out) / PREVIEW_DIR / f"{task}.png", _png(_paint(shown))))
            paths.append(write_text(Path(out) / PREVIEW_DIR / f"{task}.svg", _paint_svg(shown)))
    return paths
