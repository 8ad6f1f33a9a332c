"""Repairs of shapes read from files whose B-rep contradicts itself: faces without edges, solids turned inside out.

A file's faces can come without any boundary (an AP242 file read as 273 faces and 0 edges): nothing to draw,
no tight box, a volume integrated over nothing. Such a face is rebuilt on its surface's natural bounds
(``BRepBuilderAPI_MakeFace``; only a bounded surface has them) and the faces are sewn. A solid whose faces point
inwards has a negative volume; it is stored reversed, so the files written and every measure agree.
"""

from __future__ import annotations

from OCP.BRep import BRep_Builder, BRep_Tool
from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace, BRepBuilderAPI_Sewing
from OCP.Precision import Precision
from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_SOLID
from OCP.TopExp import TopExp_Explorer
from OCP.TopoDS import TopoDS_Compound, TopoDS_Shape

from spare_gen.cad.build import loose_parts
from spare_gen.cad.compat import indexed_subshapes, to_face
from spare_gen.cad.props import volume

SEWING_TOLERANCE = 1e-6  # model units: faces rebuilt on natural bounds meet along shared surface boundaries


def edgeless_faces(shape: TopoDS_Shape) -> int:
    """How many faces of ``shape`` carry no edge at all."""
    return sum(not TopExp_Explorer(face, TopAbs_EDGE).More() for face in indexed_subshapes(shape, TopAbs_FACE))


def _natural_face(face) -> TopoDS_Shape | None:
    surface = BRep_Tool.Surface_s(face)
    umin, umax, vmin, vmax = surface.Bounds()
    if any(abs(x) >= Precision.Infinite_s() for x in (umin, umax, vmin, vmax)):
        return None  # an unbounded surface (a plane): no natural boundary to rebuild
    maker = BRepBuilderAPI_MakeFace(surface, Precision.Confusion_s())
    return maker.Face() if maker.IsDone() else None


def rebuild_edgeless_faces(shape: TopoDS_Shape) -> tuple[TopoDS_Shape, int]:
    """``shape`` with every face that has no edge rebuilt on its surface's natural bounds, the faces sewn;
    and how many faces could not be rebuilt (unbounded surfaces). The shape itself if no face lacks edges."""
    faces = [to_face(f) for f in indexed_subshapes(shape, TopAbs_FACE)]
    if not any(not TopExp_Explorer(f, TopAbs_EDGE).More() for f in faces):
        return shape, 0
    sewing = BRepBuilderAPI_Sewing(SEWING_TOLERANCE)
    lost = 0
    for face in faces:
        if TopExp_Explorer(face, TopAbs_EDGE).More():
            sewing.Add(face)
            continue
        rebuilt = _natural_face(face)
        if rebuilt is None:
            lost += 1
        else:
            rebuilt.Orientation(face.Orientation())
            sewing.Add(rebuilt)
    sewing.Perform()
    return sewing.SewedShape(), lost


def outward_solids(shape: TopoDS_Shape) -> tuple[TopoDS_Shape, int]:
    """``shape`` with each solid of negative volume (faces pointing inwards) reversed, its loose faces and edges kept
    beside them; and how many were."""
    solids = indexed_subshapes(shape, TopAbs_SOLID)
    inverted = [s for s in solids if volume(s) < 0]
    if not inverted:
        return shape, 0
    if len(solids) == 1 and shape.ShapeType() == TopAbs_SOLID:
        return shape.Reversed(), 1
    builder, compound = BRep_Builder(), TopoDS_Compound()
    builder.MakeCompound(compound)
    for solid in solids:
        builder.Add(compound, solid.Reversed() if any(solid.IsSame(s) for s in inverted) else solid)
    for part in loose_parts(shape):  # faces outside every solid, edges outside every face: no part of a solid
        builder.Add(compound, part)
    return compound, len(inverted)
