"""Drawing rules by preset: edge classes, framing and line caps of spare_gen's own rule and of the original SPARE3D.

The original generator (``data_generation/model2svg.py``, then ``svg2png.py``) draws sharp and silhouette
edges only (no smooth G1 edges), gives each view a square viewBox of side ``factor`` x the largest edge of the
model's 3D bounding box (1.7 for CSG, 1.4 for ABC), centred on the 2D bounding box of that view's own polylines
(visible and hidden), on a 200 px canvas, with round line caps and hidden lines drawn first in red. Its 3D box
is OCCT's B-rep box of the shape read from the STEP file (``get_boundingbox`` in ``boolean.py``:
``brepbndlib_Add`` without triangulation, gap 1e-6), loose on tori, cones and curved intersections; the
``spare3d_csg`` and ``spare3d_abc`` presets size their viewBox from that same box (``BoxRule.BREP``), so a
model is drawn at the original's scale. spare_gen's own rule frames the tight box (``BoxRule.TIGHT``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from spare_gen.config.base import BoxRule
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
    box: BoxRule  # the 3D box the scale comes from

    def describe(self) -> str:
        """One sentence on the framing, for the dataset card."""
        if self.viewbox_factor is None:
            return ("Each model is drawn at one scale in all views, framed on its tight 3D bounding box "
                    "(projected box centre at the canvas centre).")
        box = ("OCCT's B-rep bounding box (`BRepBndLib::Add`, as the original generator computed it)"
               if self.box is BoxRule.BREP else "the tight 3D bounding box")
        return (f"Each view's square viewBox is {self.viewbox_factor} x the largest edge of {box}, centred on "
                "the view's own lines.")


RULES: dict[DrawingPreset, DrawingRule] = {
    DrawingPreset.SPARE_GEN: DrawingRule(True, False, None, LineCap.BUTT, BoxRule.TIGHT),
    DrawingPreset.SPARE3D_CSG: DrawingRule(False, True, 1.7, LineCap.ROUND, BoxRule.BREP),
    DrawingPreset.SPARE3D_ABC: DrawingRule(False, True, 1.4, LineCap.ROUND, BoxRule.BREP),
}


def drawing_rule(render: RenderConfig) -> DrawingRule:
    """The rule of the render section's preset."""
    return RULES[render.preset]
