"""The ranking chart: win rate per item as horizontal bars, best on top, with each win rate's 95 % interval.

Drawn with matplotlib (:mod:`spare_gen.figures`): a PNG for the report, SVG and PDF beside it for papers. Bars are
coloured by corruption kind (the registry's colour-blind safe colours); the interval is the table's
``win_rate_low`` .. ``win_rate_high`` (Wilson, ties as half wins: :func:`spare_gen.ranking.winrate.win_rate_interval`)
when the table has those columns; the Elo score is printed beside each bar.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MultipleLocator

from spare_gen import figures
from spare_gen.figures import GREY, INK
from spare_gen.ranking.judgements import KIND_ORDER, TYPE_SEPARATOR
from spare_gen.rating.corruptions import KIND_COLOURS

MAX_ROWS = 60
ROW_HEIGHT = 0.24  # inches per item
OTHER_COLOUR = (120, 120, 120)


def _kind(item: str, kind_of: Mapping[str, str] | None) -> str:
    kind = kind_of.get(item, "") if kind_of is not None else item.split(TYPE_SEPARATOR, 1)[0]
    return kind if kind in KIND_ORDER else ""


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{int(v):02x}" for v in rgb)


def _colour(kind: str) -> str:
    return _hex(KIND_COLOURS.get(kind, OTHER_COLOUR) if kind else OTHER_COLOUR)


def ranking_figure(
    table: pd.DataFrame,
    *,
    title: str = "Ranking by human judgements",
    kind_of: Mapping[str, str] | None = None,
) -> Figure:
    """The chart of ``table`` (columns item, win_rate, elo, optionally win_rate_low/win_rate_high; best first).

    Bars are coloured by corruption kind: ``kind_of`` maps item -> kind, else the kind is read from a
    'kind/severity' label.
    """
    shown = table.head(MAX_ROWS)
    if len(table) > MAX_ROWS:
        title = f"{title} (top {MAX_ROWS} of {len(table)})"
    labels = [str(i) for i in shown["item"]]
    rates = shown["win_rate"].to_numpy(float)
    kinds = [_kind(label, kind_of) for label in labels]
    has_interval = {"win_rate_low", "win_rate_high"} <= set(shown.columns)
    with figures.style():
        fig = figures.new_figure(7.2, 1.5 + ROW_HEIGHT * max(len(shown), 2))
        ax = fig.subplots()
        ax.set_title(title, loc="left")
        y = np.arange(len(shown))
        ax.barh(y, np.nan_to_num(rates), height=0.7, color=[_colour(k) for k in kinds], zorder=2)
        if has_interval:
            low, high = shown["win_rate_low"].to_numpy(float), shown["win_rate_high"].to_numpy(float)
            ok = np.isfinite(low) & np.isfinite(high) & np.isfinite(rates)
            ax.errorbar(rates[ok], y[ok], xerr=[rates[ok] - low[ok], high[ok] - rates[ok]], fmt="none",
                        ecolor=INK, elinewidth=0.9, capsize=2.5, zorder=3)
        for row, (rate, elo) in enumerate(zip(rates, shown["elo"].to_numpy(float))):
            text = "no games" if not np.isfinite(rate) else f"{rate:.2f}   Elo {elo:.0f}"
            ax.annotate(text, xy=(1.0, row), xycoords=("axes fraction", "data"), xytext=(6, 0),
                        textcoords="offset points", ha="left", va="center", fontsize=8, annotation_clip=False)
        ax.axvline(0.5, color=GREY, linewidth=0.9, zorder=1)
        ax.set_yticks(y, labels)
        ax.tick_params(axis="y", length=0)
        ax.set_ylim(len(shown) - 0.5, -0.5)  # best on top
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_locator(MultipleLocator(0.25))
        ax.grid(False, axis="y")
        ax.set_xlabel("win rate (win 1, tie 0.5, loss 0)" + (" with its 95 % interval" if has_interval else ""))
        present = [k for k in KIND_ORDER if k in kinds]
        if present:
            handles = [Patch(facecolor=_colour(k), label=k) for k in present]
            if "" in kinds:
                handles.append(Patch(facecolor=_colour(""), label="other"))
            fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6))
    return fig


def ranking_files(table: pd.DataFrame, *, title: str = "Ranking by human judgements",
                  kind_of: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """``{".png": ..., ".svg": ..., ".pdf": ...}`` of :func:`ranking_figure`."""
    return figures.render_all(ranking_figure(table, title=title, kind_of=kind_of))


def ranking_png(
    table: pd.DataFrame,
    *,
    title: str = "Ranking by human judgements",
    kind_of: Mapping[str, str] | None = None,
) -> bytes:
    """PNG bytes of :func:`ranking_figure`."""
    return figures.render(ranking_figure(table, title=title, kind_of=kind_of), ".png")
