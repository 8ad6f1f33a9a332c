"""Charts through matplotlib, the same bytes from the same data: a PNG for the card and the docs, SVG and PDF for papers.

Figures are :class:`matplotlib.figure.Figure` objects on their own Agg canvas: no pyplot, no global backend, nothing
shown or downloaded. Styles apply through :func:`style` (an ``rc_context``) while a chart is built and saved, so
nothing leaks into a caller's matplotlib settings. The font is matplotlib's bundled DejaVu Sans (never a system font,
so the pixels are the same on any machine); SVG text is written as paths, SVG ids are salted with a fixed string and
no file carries a date or a software version.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

DPI = 150  # PNG pixels per inch: a 7.2 in wide chart is 1080 px, sharp on the card and in the docs
SUFFIXES = (".png", ".svg", ".pdf")  # what every chart is written as, with the same stem
VECTOR_SUFFIXES = SUFFIXES[1:]
# Okabe-Ito: told apart with the common colour-vision deficiencies
BLUE, ORANGE, GREEN, PINK, SKY, VERMILION, YELLOW, GREY, INK = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#777777", "#222222")
STYLE = {
    "font.family": "DejaVu Sans",  # bundled with matplotlib
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "text.color": INK,
    "axes.grid": True,
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "svg.fonttype": "path",  # text as outlines: the SVG looks the same without the font installed
    "svg.hashsalt": "spare_gen",  # fixed ids for clip paths and glyphs: same data, same SVG bytes
    "pdf.fonttype": 42,  # TrueType in the PDF: text stays selectable and editable
    "path.simplify": False,
}
METADATA = {  # nothing that changes between runs, machines or matplotlib versions (the PNG carries none)
    ".svg": {"Date": None, "Creator": None},
    ".pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
}


@contextmanager
def style() -> Iterator[None]:
    """The house style for building and saving a chart (matplotlib reads most settings when an artist is made)."""
    with matplotlib.rc_context(STYLE):
        yield


def new_figure(width: float, height: float) -> Figure:
    """An empty figure ``width`` x ``height`` inches on its own Agg canvas, laid out by constrained layout.
    Call inside :func:`style`."""
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def render(fig: Figure, suffix: str) -> bytes:
    """The bytes of ``fig`` as ``suffix`` (one of :data:`SUFFIXES`). The PNG is RGB (the chart is opaque), written by
    Pillow from the Agg pixels with its resolution and nothing else."""
    if suffix not in SUFFIXES:
        raise ValueError(f"figure format {suffix!r}: expected one of {', '.join(SUFFIXES)}")
    buf = io.BytesIO()
    with style():
        if suffix == ".png":
            fig.set_facecolor("white")
            fig.canvas.draw()
            rgb = np.asarray(fig.canvas.buffer_rgba())[..., :3]
            Image.fromarray(np.ascontiguousarray(rgb), "RGB").save(buf, format="PNG", dpi=(DPI, DPI), optimize=False)
        else:
            fig.savefig(buf, format=suffix[1:], dpi=DPI, metadata=METADATA[suffix], facecolor="white")
    return buf.getvalue()


def render_all(fig: Figure) -> dict[str, bytes]:
    """``{suffix: bytes}`` for every one of :data:`SUFFIXES`, the PNG first."""
    return {suffix: render(fig, suffix) for suffix in SUFFIXES}
