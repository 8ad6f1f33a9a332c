"""Cut a shape with one placed primitive (the cut objects of the three-view-to-isometric task)."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from OCP.Bnd import Bnd_Box
from OCP.BRepAlgoAPI import BRepAlgoAPI_Cut
from OCP.BRepBndLib import BRepBndLib
from OCP.BRepBuilderAPI import BRepBuilderAPI_Copy
from OCP.TopAbs import TopAbs_FACE
from OCP.TopExp import TopExp_Explorer
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.build import CsgError, build_primitive
from spare_gen.cad.props import is_valid, volume


class Cut(NamedTuple):
    shape: TopoDS_Shape
    valid: bool  # BRepCheck_Analyzer verdict
    volume: float
    has_faces: bool


def cut_with(shape: TopoDS_Shape, cutter: Mapping[str, Any]) -> Cut:
    """``shape`` minus the primitive ``cutter`` (a CSG primitive spec: type, params, rotation, translation).

    Coplanar face splits are merged (SimplifyResult) so a cut draws no seam lines; in the few cases
    where the merged shape fails BRepCheck, the unmerged (valid) result is kept instead. The boolean
    works on a copy of ``shape``: SimplifyResult edits sub-shapes the result shares with its argument in
    place, which corrupted the model for every later cutter (volumes, validity, empty cuts).
    """
    algo = BRepAlgoAPI_Cut(BRepBuilderAPI_Copy(shape).Shape(), build_primitive(cutter))
    if not algo.IsDone():
        raise CsgError(f"cut with a {cutter.get('type')!r} failed in OpenCASCADE")
    raw = algo.Shape()
    algo.SimplifyResult()
    result = algo.Shape()
    valid = is_valid(result)
    if not valid:
        result, valid = raw, is_valid(raw)
    return Cut(result, valid, volume(result), TopExp_Explorer(result, TopAbs_FACE).More())


def bare_cut(shape: TopoDS_Shape, cutter: Mapping[str, Any]) -> TopoDS_Shape:
    """The boolean alone (no copy, merge, check or volume): the benchmarks' floor for one cut."""
    return BRepAlgoAPI_Cut(shape, build_primitive(cutter)).Shape()


def removed_fraction(original_volume: float, cut: Cut) -> float:
    """Share of the original volume the cut removed (0 = missed, 1 = nothing left); 0 for volume-less shapes."""
    if original_volume <= 0:
        return 0.0
    return max(0.0, min(1.0, 1.0 - cut.volume / original_volume))


def removable_volume(model_bbox, cutter: Mapping[str, Any]) -> float:
    """An upper bound on the volume ``cutter`` can remove from a model with bounding box ``model_bbox``,
    without a boolean: the smaller of the cutter's own volume and the volume of the two boxes' overlap."""
    tool = build_primitive(cutter)
    loose = Bnd_Box()  # not the optimal box (7 ms on a torus): any box holding the cutter gives a bound
    BRepBndLib.Add_s(tool, loose, False)
    lo, hi = loose.CornerMin(), loose.CornerMax()
    box = (lo.X(), lo.Y(), lo.Z(), hi.X(), hi.Y(), hi.Z())
    overlap = 1.0
    for i in range(3):
        overlap *= max(0.0, min(box[i + 3], model_bbox[i + 3]) - max(box[i], model_bbox[i]))
    return min(abs(volume(tool)), overlap)
