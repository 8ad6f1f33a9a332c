"""A horizontal bar chart of the ranking (win rate per item, best on top) drawn with Pillow.

Pillow is already a dependency; a bar chart needs only rectangles and text, so matplotlib is not
worth adding. The layout is measured from the text extents, so labels never overlap the bars.
"""

from __future__ import annotations

import io
from collections.abc import Mapping

import pandas as pd
from PIL import Image, ImageDraw, ImageFont

from spare_gen.wireframes.corruptions import KIND_COLOURS
from spare_gen.ranking.judgements import KIND_ORDER, TYPE_SEPARATOR

MAX_ROWS = 60
FONT_SIZE = 14
ROW_HEIGHT = 24
BAR_WIDTH = 420
MARGIN = 16
BACKGROUND = (255, 255, 255)
INK = (33, 33, 33)
GRID = (200, 200, 200)
OTHER_COLOUR = (120, 120, 120)


def _font(size: int) -> ImageFont.ImageFont:
    """Pillow's bundled scalable font (no system fonts needed, same pixels everywhere)."""
    return ImageFont.load_default(size=size)


def _colour(item: str, kind_of: Mapping[str, str] | None) -> tuple[int, int, int]:
    kind = kind_of.get(item, "") if kind_of is not None else item.split(TYPE_SEPARATOR, 1)[0]
    return KIND_COLOURS.get(kind, OTHER_COLOUR) if kind in KIND_ORDER else OTHER_COLOUR


def ranking_png(
    table: pd.DataFrame,
    *,
    title: str = "Ranking by human judgements",
    kind_of: Mapping[str, str] | None = None,
) -> bytes:
    """PNG bytes of ``table`` (columns item, win_rate, elo; best first) as win-rate bars with Elo labels.

    Bars are coloured by corruption kind: ``kind_of`` maps item -> kind, else the kind is read from a
    'kind/severity' label.
    """
    shown = table.head(MAX_ROWS)
    if len(table) > MAX_ROWS:
        title = f"{title} (top {MAX_ROWS} of {len(table)})"
    font, title_font = _font(FONT_SIZE), _font(FONT_SIZE + 4)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    labels = [str(i) for i in shown["item"]]
    values = [f"{w:.2f}  Elo {e:.0f}" for w, e in zip(shown["win_rate"].fillna(0.0), shown["elo"])]
    label_w = max([probe.textlength(t, font=font) for t in labels] + [0])
    value_w = max([probe.textlength(t, font=font) for t in values] + [0])
    title_w = probe.textlength(title, font=title_font)
    x_bar = int(MARGIN + label_w + 10)
    width = int(max(x_bar + BAR_WIDTH + 8 + value_w + MARGIN, title_w + 2 * MARGIN))
    y_top = MARGIN + FONT_SIZE + 4 + 14
    height = y_top + ROW_HEIGHT * len(shown) + FONT_SIZE + 3 * MARGIN

    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, MARGIN), title, fill=INK, font=title_font)
    y_axis = y_top + ROW_HEIGHT * len(shown)
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):  # grid and axis labels
        x = x_bar + round(tick * BAR_WIDTH)
        draw.line([(x, y_top - 4), (x, y_axis)], fill=INK if tick == 0.5 else GRID, width=1)
        draw.text((x, y_axis + 4), f"{tick:g}", fill=INK, font=font, anchor="ma")
    axis_title = "win rate (tie = half a win)"
    draw.text((x_bar + BAR_WIDTH // 2, y_axis + 8 + FONT_SIZE), axis_title, fill=INK, font=font, anchor="ma")
    for row, (label, value, rate) in enumerate(zip(labels, values, shown["win_rate"].fillna(0.0))):
        y_mid = y_top + row * ROW_HEIGHT + ROW_HEIGHT // 2
        x_end = x_bar + round(float(rate) * BAR_WIDTH)
        draw.rectangle([(x_bar, y_mid - 8), (max(x_end, x_bar + 1), y_mid + 8)], fill=_colour(label, kind_of))
        draw.text((x_bar - 10, y_mid), label, fill=INK, font=font, anchor="rm")
        draw.text((x_bar + BAR_WIDTH + 8, y_mid), value, fill=INK, font=font, anchor="lm")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()
