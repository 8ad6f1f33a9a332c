"""Quality gate for real CAD: a B-rep that fails BRepCheck or a file of several disjoint solids is flagged, not dropped.

A flagged model stays in models.parquet (``quality``, ``quality_reason``) and is drawn, but the question
stage leaves it out unless ``questions.allow_flagged_cad`` is set: a corrupted file otherwise turns into
a question whose drawings show a fragment (issue 15: bug32314_corrupted.stp, 11 solids, a 12-px dash).
"""

from __future__ import annotations

from enum import Enum


class Quality(str, Enum):
    OK = "ok"
    INVALID_BREP = "invalid_brep"  # BRepCheck_Analyzer says the shape is not valid
    DISJOINT_SOLIDS = "disjoint_solids"  # several solids that do not touch: not one object


def assess(valid: bool, n_solids: int, solid_groups: int) -> tuple[str, str]:
    """(quality, one-line reason); the first failing check names the quality, the reason lists every failure."""
    reasons: list[tuple[Quality, str]] = []
    if not valid:
        reasons.append((Quality.INVALID_BREP, "the B-rep fails BRepCheck"))
    if solid_groups > 1:
        reasons.append((Quality.DISJOINT_SOLIDS, f"{n_solids} solids in {solid_groups} disjoint groups"))
    if not reasons:
        return Quality.OK.value, ""
    return reasons[0][0].value, "; ".join(r for _, r in reasons)
