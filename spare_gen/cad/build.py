"""Build B-rep solids from CSG programs: primitives, 90-degree rotations, translations and booleans."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from OCP.BRepAlgoAPI import BRepAlgoAPI_Common, BRepAlgoAPI_Cut, BRepAlgoAPI_Fuse
from OCP.BRepPrimAPI import (
    BRepPrimAPI_MakeBox,
    BRepPrimAPI_MakeCone,
    BRepPrimAPI_MakeCylinder,
    BRepPrimAPI_MakeSphere,
    BRepPrimAPI_MakeTorus,
)
from OCP.gp import gp_Ax1, gp_Ax2, gp_Dir, gp_Pnt, gp_Trsf, gp_Vec
from OCP.BRep import BRep_Builder, BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve
from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeVertex, BRepBuilderAPI_Transform
from OCP.BRepExtrema import BRepExtrema_DistShapeShape
from OCP.BRepTools import BRepTools_ReShape
from OCP.Precision import Precision
from OCP.TopAbs import (
    TopAbs_EDGE,
    TopAbs_FACE,
    TopAbs_FORWARD,
    TopAbs_REVERSED,
    TopAbs_SOLID,
    TopAbs_ShapeEnum,
)
from OCP.TopExp import TopExp_Explorer
from OCP.TopoDS import TopoDS_Compound, TopoDS_Shape

from spare_gen.cad.compat import IndexedShapeMap, indexed_subshapes, to_edge, to_face
from spare_gen.cad.props import volume
from spare_gen.config.schema import ROTATION_AXES, Primitive


class CsgError(ValueError):
    """A CSG program that cannot be built (unknown primitive or operation, failed boolean)."""


def _centred_z_axis(height: float) -> gp_Ax2:
    """Axis placement so a z-aligned primitive of this height is centred on the origin."""
    return gp_Ax2(gp_Pnt(0.0, 0.0, -height / 2.0), gp_Dir(0.0, 0.0, 1.0))


def _box(p: Mapping[str, float]) -> TopoDS_Shape:
    dx, dy, dz = p["dx"], p["dy"], p["dz"]
    return BRepPrimAPI_MakeBox(gp_Pnt(-dx / 2, -dy / 2, -dz / 2), dx, dy, dz).Shape()


# Each primitive kind's builder: params -> the solid centred on the origin.
PRIMITIVES: dict[Primitive, Callable[[Mapping[str, float]], TopoDS_Shape]] = {
    Primitive.BOX: _box,
    Primitive.SPHERE: lambda p: BRepPrimAPI_MakeSphere(gp_Pnt(0.0, 0.0, 0.0), p["r"]).Shape(),
    Primitive.CYLINDER: lambda p: BRepPrimAPI_MakeCylinder(_centred_z_axis(p["h"]), p["r"], p["h"]).Shape(),
    Primitive.CONE: lambda p: BRepPrimAPI_MakeCone(_centred_z_axis(p["h"]), p["r1"], p["r2"], p["h"]).Shape(),
    Primitive.TORUS: lambda p: BRepPrimAPI_MakeTorus(gp_Ax2(gp_Pnt(0, 0, 0), gp_Dir(0, 0, 1)), p["R"], p["r"]).Shape(),
}


def make_primitive(kind: str, params: Mapping[str, float]) -> TopoDS_Shape:
    """One primitive centred on the origin (``Primitive``: box, sphere, cylinder, cone, torus)."""
    if kind not in {p.value for p in PRIMITIVES}:
        raise CsgError(f"unknown primitive {kind!r}; choose from {', '.join(p.value for p in PRIMITIVES)}")
    return PRIMITIVES[Primitive(kind)](params)


def place(shape: TopoDS_Shape, axis: str, degrees: float, translation: Sequence[float]) -> TopoDS_Shape:
    """Rotate about a principal axis through the origin, then translate."""
    if axis not in ROTATION_AXES:
        raise CsgError(f"unknown rotation axis {axis!r}; choose from {', '.join(ROTATION_AXES)}")
    rot = gp_Trsf()
    rot.SetRotation(gp_Ax1(gp_Pnt(0, 0, 0), gp_Dir(*ROTATION_AXES[axis])), math.radians(degrees))
    move = gp_Trsf()
    move.SetTranslation(gp_Vec(*map(float, translation)))
    trsf = move.Multiplied(rot)
    return BRepBuilderAPI_Transform(shape, trsf, True).Shape()


def boolean(op: str, a: TopoDS_Shape, b: TopoDS_Shape) -> TopoDS_Shape:
    algo = {"union": BRepAlgoAPI_Fuse, "difference": BRepAlgoAPI_Cut, "intersection": BRepAlgoAPI_Common}.get(op)
    if algo is None:
        raise CsgError(f"unknown operation {op!r}; choose from union, difference, intersection")
    result = algo(a, b)
    if not result.IsDone():
        raise CsgError(f"boolean {op} failed in OpenCASCADE")
    if op == "union":
        result.SimplifyResult()
    return result.Shape()


def build_primitive(spec: Mapping[str, Any]) -> TopoDS_Shape:
    rotation = spec.get("rotation", {"axis": "z", "degrees": 0})
    shape = make_primitive(spec["type"], spec["params"])
    return place(shape, rotation["axis"], rotation["degrees"], spec.get("translation", (0, 0, 0)))


def build_csg(program: Mapping[str, Any]) -> TopoDS_Shape:
    """Build ``{"primitives": [...], "operations": [...]}`` as a left fold: ((p0 op0 p1) op1 p2) ..."""
    prims = program["primitives"]
    ops = program["operations"]
    if len(ops) != len(prims) - 1:
        raise CsgError(f"CSG program has {len(prims)} primitives but {len(ops)} operations (need one fewer)")
    shape = build_primitive(prims[0])
    for op, spec in zip(ops, prims[1:]):
        shape = boolean(op, shape, build_primitive(spec))
    return shape


def _explore(shape: TopoDS_Shape, kind: TopAbs_ShapeEnum, avoid: TopAbs_ShapeEnum | None = None) -> list[TopoDS_Shape]:
    exp = TopExp_Explorer(shape, kind) if avoid is None else TopExp_Explorer(shape, kind, avoid)
    out = []
    while exp.More():
        out.append(exp.Current())
        exp.Next()
    return out


def solids(shape: TopoDS_Shape) -> list[TopoDS_Shape]:
    return _explore(shape, TopAbs_SOLID)


def loose_parts(shape: TopoDS_Shape) -> list[TopoDS_Shape]:
    """Faces outside every solid and edges outside every face (a file may hold them beside its solids)."""
    return _explore(shape, TopAbs_FACE, TopAbs_SOLID) + _explore(shape, TopAbs_EDGE, TopAbs_FACE)


# an edge held in one of these orientations by a face bounds it; one held INTERNAL or EXTERNAL bounds nothing
BOUNDING_ORIENTATIONS = (TopAbs_FORWARD, TopAbs_REVERSED)
ON_FACE_SAMPLES = 9  # points along an edge a face holds INTERNAL or EXTERNAL, each checked to lie on that face
# how far a sample may lie from the face, in multiples of the edge's and face's tolerances together
ON_FACE_TOLERANCES = 2.0


def _edges_in_faces(shape: TopoDS_Shape) -> tuple[IndexedShapeMap, list[tuple[TopoDS_Shape, TopoDS_Shape]]]:
    """(the distinct edges of ``shape`` that bound a face, (edge, face) for each edge a face holds INTERNAL or
    EXTERNAL). Orientations are composed through the face's wires, the face itself taken FORWARD, so a face stored
    INTERNAL in a solid still counts its boundary."""
    bounding, held = IndexedShapeMap(), []
    for face in indexed_subshapes(shape, TopAbs_FACE):
        exp = TopExp_Explorer(face.Oriented(TopAbs_FORWARD), TopAbs_EDGE)
        while exp.More():
            edge = exp.Current()
            if edge.Orientation() in BOUNDING_ORIENTATIONS:
                bounding.Add(edge)
            else:
                held.append((edge, face))
            exp.Next()
    return bounding, held


def lies_on_face(edge: TopoDS_Shape, face: TopoDS_Shape) -> bool:
    """Whether ``edge`` lies on ``face`` (ON_FACE_SAMPLES points along it, each within the two shapes' tolerances
    of the bounded face): a line on the face, such as OCCT's booleans keep INTERNAL where two primitives touch.
    ``face`` must not hold ``edge`` itself (the distance to a face counts its edges: it would be 0)."""
    edge, face = to_edge(edge), to_face(face)
    if BRep_Tool.Degenerated_s(edge):
        return True
    tolerance = ON_FACE_TOLERANCES * (BRep_Tool.Tolerance_s(edge) + BRep_Tool.Tolerance_s(face)) \
        + Precision.Confusion_s()
    curve = BRepAdaptor_Curve(edge)
    first, last = curve.FirstParameter(), curve.LastParameter()
    for i in range(ON_FACE_SAMPLES):
        point = BRepBuilderAPI_MakeVertex(curve.Value(first + (last - first) * i / (ON_FACE_SAMPLES - 1))).Vertex()
        distance = BRepExtrema_DistShapeShape(point, face)
        if not distance.IsDone() or distance.Value() > tolerance:
            return False
    return True


def loose_edges(shape: TopoDS_Shape) -> list[TopoDS_Shape]:
    """The distinct edges of ``shape`` that bound no face and lie on none (datum axes, construction lines, wires of a
    file), wherever they are stored: free in a compound, held directly by a solid (in a compsolid or not), or held
    INTERNAL or EXTERNAL by a face they leave (bounding no other face).

    An edge a face holds INTERNAL or EXTERNAL and that lies on that face is a line on the face, not loose: OCCT's
    booleans keep one where two primitives touch (4 of the default config's 240 CSG models hold such lines), and it
    is drawn as OCCT's hidden-line removal draws it, as the original SPARE3D drawings did."""
    if not _explore(shape, TopAbs_EDGE, TopAbs_FACE) and not _has_unbounding_orientation(shape):
        return []  # the fast answer for shapes whose every edge lies in a face and bounds it
    bounding, held = _edges_in_faces(shape)
    on_face, bare = IndexedShapeMap(), dict[TopoDS_Shape, TopoDS_Shape]()
    for edge, face in held:
        if bounding.Contains(edge) or on_face.Contains(edge):
            continue
        key = next((k for k in bare if k.IsSame(face)), None)
        if key is None:  # the face without the edges it holds INTERNAL or EXTERNAL: what the edge must lie on
            key, reshape = face, BRepTools_ReShape()
            for other, holder in held:
                if holder.IsSame(face):
                    reshape.Remove(other)
            bare[key] = reshape.Apply(face)
        if lies_on_face(edge, bare[key]):
            on_face.Add(edge)
    return [edge for edge in indexed_subshapes(shape, TopAbs_EDGE)
            if not bounding.Contains(edge) and not on_face.Contains(edge)]


def _has_unbounding_orientation(shape: TopoDS_Shape) -> bool:
    """Whether some edge of ``shape`` is held INTERNAL or EXTERNAL (orientations composed from ``shape`` down)."""
    exp = TopExp_Explorer(shape, TopAbs_EDGE)
    while exp.More():
        if exp.Current().Orientation() not in BOUNDING_ORIENTATIONS:
            return True
        exp.Next()
    return False


def loose_edge_count(shape: TopoDS_Shape) -> int:
    """How many distinct edges of ``shape`` bound no face (``loose_edges``)."""
    return len(loose_edges(shape))


def without_loose_edges(shape: TopoDS_Shape) -> tuple[TopoDS_Shape, int]:
    """``shape`` without its loose edges (``loose_edges``: edges that bound no face, wherever they are stored), and
    how many there were.

    The shape itself when it has none; a shape that is nothing but loose edges is returned as it is (nothing else to
    draw). Faces, shells and solids that held a loose edge are rebuilt without it (``BRepTools_ReShape``), every
    other sub-shape is shared with ``shape``.
    """
    loose = loose_edges(shape)
    if not loose:
        return shape, 0
    reshape = BRepTools_ReShape()
    for edge in loose:
        reshape.Remove(edge)
    kept = reshape.Apply(shape)
    if kept.IsNull() or not TopExp_Explorer(kept, TopAbs_FACE).More():
        return shape, len(loose)
    return kept, len(loose)


def compound(parts: list[TopoDS_Shape]) -> TopoDS_Compound:
    result, builder = TopoDS_Compound(), BRep_Builder()
    builder.MakeCompound(result)
    for part in parts:
        builder.Add(result, part)
    return result


FUSED_VOLUME_RTOL = 1e-3  # the fused volume may fall this fraction outside [largest solid, sum of the solids]


def outward(parts: list[TopoDS_Shape]) -> tuple[list[TopoDS_Shape], list[float]]:
    """Each solid with its faces pointing outwards (one of negative volume, turned inside out, reversed), and the
    solids' volumes (positive)."""
    volumes = [volume(p) for p in parts]
    return [p.Reversed() if v < 0 else p for p, v in zip(parts, volumes)], [abs(v) for v in volumes]


def fused_volume_fits(fused: float, volumes: list[float]) -> bool:
    """Whether a union of solids of these ``volumes`` may have volume ``fused``: at least the largest, at most the
    sum (within FUSED_VOLUME_RTOL). A boolean that loses solids, or turns the result inside out, gives less."""
    slack = FUSED_VOLUME_RTOL * sum(volumes)
    return max(volumes) - slack <= fused <= sum(volumes) + slack


def fuse_all(shape: TopoDS_Shape) -> TopoDS_Shape:
    """Fuse overlapping solids into one (before HLR), keeping loose faces and edges beside them.

    Single-solid or solid-less shapes are returned as they are. Solids turned inside out (negative volume) are
    reversed first: fused as they are, each would count as everything outside it. A fusion that fails, or whose
    volume cannot be the union's (``fused_volume_fits``: OCCT's booleans on an invalid B-rep were seen to keep one
    flat fragment of 40 solids in 4 groups), gives the solids unfused instead, all of them, each facing outwards.
    """
    parts = solids(shape)
    if len(parts) < 2:
        return shape
    given = parts
    parts, volumes = outward(given)
    loose = loose_parts(shape)
    unfused = shape if all(p is q for p, q in zip(parts, given)) else compound(parts + loose)
    result = parts[0]
    for other in parts[1:]:
        fuse = BRepAlgoAPI_Fuse(result, other)
        if not fuse.IsDone():
            return unfused
        result = fuse.Shape()
    if not fused_volume_fits(volume(result), volumes):
        return unfused
    return compound([result, *loose]) if loose else result
