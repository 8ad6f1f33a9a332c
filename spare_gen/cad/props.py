"""Geometric properties of a shape: bounding box, volume, topology counts, validity."""

from __future__ import annotations

from OCP.Bnd import Bnd_Box
from OCP.BRepBndLib import BRepBndLib
from OCP.BRepCheck import BRepCheck_Analyzer
from OCP.BRepExtrema import BRepExtrema_DistShapeShape
from OCP.BRepGProp import BRepGProp
from OCP.GProp import GProp_GProps
from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_SHELL, TopAbs_SOLID, TopAbs_VERTEX
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.compat import indexed_subshapes


def _count(shape: TopoDS_Shape, kind) -> int:
    return len(indexed_subshapes(shape, kind))


def bounding_box(shape: TopoDS_Shape) -> tuple[float, float, float, float, float, float]:
    """Tight axis-aligned box (xmin, ymin, zmin, xmax, ymax, zmax)."""
    box = Bnd_Box()
    BRepBndLib.AddOptimal_s(shape, box, False, False)
    if box.IsVoid():
        return (0.0,) * 6
    lo, hi = box.CornerMin(), box.CornerMax()  # OCP 8: Bnd_Box.Get() returns an unbound struct
    return (lo.X(), lo.Y(), lo.Z(), hi.X(), hi.Y(), hi.Z())


SPARE3D_BOX_GAP = 1e-6  # the gap SPARE3D's get_boundingbox (data_generation/boolean.py) set on its Bnd_Box


def brep_bounding_box(shape: TopoDS_Shape) -> tuple[float, float, float, float, float, float] | None:
    """OCCT's B-rep box as the original SPARE3D generator computed it (None for an empty shape).

    ``BRepBndLib::Add`` on the exact geometry (no triangulation) with a 1e-6 gap: control-point and
    tolerance bounds, loose on tori, cones and curved intersections (up to ~1.7x the tight box's
    largest edge on CSG models). On spare_gen's BREP copy it equals the box of the shape read back from
    the STEP copy within 1e-6 (tolerances).
    """
    box = Bnd_Box()
    box.SetGap(SPARE3D_BOX_GAP)
    BRepBndLib.Add_s(shape, box, False)
    if box.IsVoid():
        return None
    lo, hi = box.CornerMin(), box.CornerMax()
    return (lo.X(), lo.Y(), lo.Z(), hi.X(), hi.Y(), hi.Z())


def volume(shape: TopoDS_Shape) -> float:
    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(shape, props)
    return float(props.Mass())


def area(shape: TopoDS_Shape) -> float:
    props = GProp_GProps()
    BRepGProp.SurfaceProperties_s(shape, props)
    return float(props.Mass())


def is_valid(shape: TopoDS_Shape) -> bool:
    return bool(BRepCheck_Analyzer(shape).IsValid())


def solid_groups(shape: TopoDS_Shape, relative_tolerance: float = 1e-6) -> int:
    """How many groups of touching solids the shape holds (0 without solids; 1 = one connected part).

    Two solids touch when their distance is within ``relative_tolerance`` x the bounding-box diagonal;
    boxes further apart than that are not measured.
    """
    solids = indexed_subshapes(shape, TopAbs_SOLID)
    if len(solids) < 2:
        return len(solids)
    lo_hi = [bounding_box(s) for s in solids]
    box = bounding_box(shape)
    tol = relative_tolerance * max(sum((box[i + 3] - box[i]) ** 2 for i in range(3)) ** 0.5, 1e-12)
    parent = list(range(len(solids)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(solids)):
        for j in range(i + 1, len(solids)):
            a, b = lo_hi[i], lo_hi[j]
            if root(i) == root(j) or any(a[k] > b[k + 3] + tol or b[k] > a[k + 3] + tol for k in range(3)):
                continue
            dist = BRepExtrema_DistShapeShape(solids[i], solids[j])
            if dist.IsDone() and dist.Value() <= tol:
                parent[root(i)] = root(j)
    return len({root(i) for i in range(len(solids))})


def solids_and_volume(shape: TopoDS_Shape) -> tuple[int, float]:
    """The two cheap measures a CSG result is judged by first: how many solids it holds, and its volume."""
    return _count(shape, TopAbs_SOLID), volume(shape)


def shape_stats(shape: TopoDS_Shape, known: dict | None = None) -> dict:
    """Row fields for models.parquet; ``known`` holds fields already measured on this shape (not measured again)."""
    known = known or {}
    bbox = bounding_box(shape)
    return {
        "bbox_min": list(bbox[:3]),
        "bbox_max": list(bbox[3:]),
        "volume": known["volume"] if "volume" in known else volume(shape),
        "area": area(shape),
        "n_solids": known["n_solids"] if "n_solids" in known else _count(shape, TopAbs_SOLID),
        "n_shells": _count(shape, TopAbs_SHELL),
        "n_faces": _count(shape, TopAbs_FACE),
        "n_edges": _count(shape, TopAbs_EDGE),
        "n_vertices": _count(shape, TopAbs_VERTEX),
        "valid": known["valid"] if "valid" in known else is_valid(shape),
    }
