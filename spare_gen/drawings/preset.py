"""Drawing rules by preset: edge classes, framing and line caps of spare_gen's own rule and of the original SPARE3D.

The original generator (``Data_generation_script/model2svg.py``, then ``svg2png.py``) draws sharp and silhouette
edges only (no smooth G1 edges), gives each view a square viewBox of side ``factor`` x the largest edge of the
model's 3D bounding box (1.7 for CSG, 1.4 for ABC), centred on the 2D bounding box of that view's own polylines
(visible and hidden), on a 200 px canvas, with round line caps and hidden lines drawn first in red.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from spare_gen.config.schema import DrawingPreset, RenderConfig


class LineCap(str, Enum):
    BUTT = "butt"
    ROUND = "round"


@dataclass(frozen=True)
class DrawingRule:
    smooth_edges: bool  # draw smooth (G1, Rg1) edges such as fillet boundaries
    per_view_centre: bool  # centre each view on its own lines' 2D box (else the projected 3D box centre)
    viewbox_factor: float | None  # canvas side = factor x largest 3D bbox edge; None = render.margin rule
    linecap: LineCap


RULES: dict[DrawingPreset, DrawingRule] = {
    DrawingPreset.SPARE_GEN: DrawingRule(True, False, None, LineCap.BUTT),
    DrawingPreset.SPARE3D_CSG: DrawingRule(False, True, 1.7, LineCap.ROUND),
    DrawingPreset.SPARE3D_ABC: DrawingRule(False, True, 1.4, LineCap.ROUND),
}


def drawing_rule(render: RenderConfig) -> DrawingRule:
    """The rule of the render section's preset."""
    return RULES[render.preset]
