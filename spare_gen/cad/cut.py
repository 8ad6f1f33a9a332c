"""Cut a shape with one placed primitive (the cut objects of the three-view-to-isometric task)."""

from __future__ import annotations

from typing import Any, Mapping

from OCP.BRepAlgoAPI import BRepAlgoAPI_Cut
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.build import CsgError, build_primitive
from spare_gen.cad.props import volume


def cut_with(shape: TopoDS_Shape, cutter: Mapping[str, Any]) -> TopoDS_Shape:
    """``shape`` minus the primitive ``cutter`` (a CSG primitive spec: type, params, rotation, translation).

    Coplanar face splits left by the boolean are merged (SimplifyResult), so a cut draws no seam lines.
    """
    tool = build_primitive(cutter)
    algo = BRepAlgoAPI_Cut(shape, tool)
    if not algo.IsDone():
        raise CsgError(f"cut with a {cutter.get('type')!r} failed in OpenCASCADE")
    algo.SimplifyResult()
    return algo.Shape()


def removed_fraction(original: TopoDS_Shape, cut: TopoDS_Shape) -> float:
    """Share of the original volume the cut removed (0 = missed, 1 = nothing left); 0 for volume-less shapes."""
    before = volume(original)
    if before <= 0:
        return 0.0
    return max(0.0, min(1.0, 1.0 - volume(cut) / before))
