"""Per-model preparation for hidden-line removal: fuse solids, split risky seams, encode edge continuity, sample edges."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from OCP.Bnd import Bnd_Box
from OCP.BRep import BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve, BRepAdaptor_Surface
from OCP.BRepBndLib import BRepBndLib
from OCP.BRepCheck import BRepCheck_Analyzer
from OCP.BRepLib import BRepLib
from OCP.GeomAbs import GeomAbs_Shape, GeomAbs_SurfaceType
from OCP.ShapeFix import ShapeFix_Shape
from OCP.ShapeUpgrade import ShapeUpgrade_ShapeDivideClosed
from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE
from OCP.TopExp import TopExp, TopExp_Explorer
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.build import fuse_all
from spare_gen.cad.compat import EdgeFaceMap, indexed_subshapes, to_edge, to_face
from spare_gen.cad.sampling import sample_curve

# Faces meeting at an edge within this angle (radians) count as tangent (G1) when encoding regularity.
REGULARITY_ANGLE = 1e-6
# Surfaces whose seams exact HLR draws right even when the seam lies on the silhouette (checked on
# every CSG orientation against the mesh algorithm). On others (tori above all) such a seam comes
# out hidden and the silhouette is missing, so their closed faces are split in two first.
SEAM_SAFE_SURFACES = frozenset(
    {GeomAbs_SurfaceType.GeomAbs_Plane, GeomAbs_SurfaceType.GeomAbs_Cylinder,
     GeomAbs_SurfaceType.GeomAbs_Cone, GeomAbs_SurfaceType.GeomAbs_Sphere}
)


@dataclass(frozen=True)
class PreparedShape:
    """``base``: fused, continuity encoded. ``exact``: the same with risky closed faces split (or ``base``)."""

    base: TopoDS_Shape
    exact: TopoDS_Shape

    @property
    def split(self) -> bool:
        return self.exact is not self.base


def has_risky_seam(shape: TopoDS_Shape) -> bool:
    """True if a face on a surface outside SEAM_SAFE_SURFACES has a seam edge."""
    for face in indexed_subshapes(shape, TopAbs_FACE):
        face = to_face(face)
        if BRepAdaptor_Surface(face, False).GetType() in SEAM_SAFE_SURFACES:
            continue
        exp = TopExp_Explorer(face, TopAbs_EDGE)
        while exp.More():
            if BRep_Tool.IsClosed_s(to_edge(exp.Current()), face):
                return True
            exp.Next()
    return False


def split_closed_faces(shape: TopoDS_Shape) -> TopoDS_Shape | None:
    """Every closed (periodic) face split in two and the result healed; None if it is not a valid shape.

    The seam becomes an ordinary edge between two faces of one surface (RgN: not drawn), and the
    silhouette through it is computed like any other. ShapeUpgrade's split alone can leave invalid
    pcurves, on which exact HLR silently returns nothing; ShapeFix repairs them.
    """
    divider = ShapeUpgrade_ShapeDivideClosed(shape)
    divider.SetNbSplitPoints(1)
    divider.Perform()
    result = divider.Result()
    if result is None or result.IsNull():
        return None
    fixer = ShapeFix_Shape(result)
    fixer.Perform()
    result = fixer.Shape()
    if result is None or result.IsNull() or not BRepCheck_Analyzer(result).IsValid():
        return None
    return result


def prepare_shape(shape: TopoDS_Shape, split_seams: bool = True) -> PreparedShape:
    """Fuse overlapping solids, encode edge continuity, and split risky closed faces for exact HLR.

    With continuity encoded, HLR tells seams and splits inside one smooth surface (RgN, not drawn)
    from tangent edges (Rg1, drawn) and creases (sharp, drawn).
    """
    base = fuse_all(shape)
    BRepLib.EncodeRegularity_s(base, REGULARITY_ANGLE)
    exact = split_closed_faces(base) if split_seams and has_risky_seam(base) else None
    if exact is None:
        return PreparedShape(base, base)
    BRepLib.EncodeRegularity_s(exact, REGULARITY_ANGLE)
    return PreparedShape(base, exact)


def has_edges(shape: TopoDS_Shape) -> bool:
    return TopExp_Explorer(shape, TopAbs_EDGE).More()


def quick_bbox(shape: TopoDS_Shape) -> tuple[float, ...]:
    """A fast, slightly loose box (control points, tolerances): enough to size the curve tolerance.

    The tight box (``props.bounding_box``) costs several HLR views on curved CSG models; drawings take
    their tight extents from the F/R/T projections instead.
    """
    box = Bnd_Box()
    BRepBndLib.Add_s(shape, box, True)
    if box.IsVoid():
        return (0.0,) * 6
    lo, hi = box.CornerMin(), box.CornerMax()
    return (lo.X(), lo.Y(), lo.Z(), hi.X(), hi.Y(), hi.Z())


def _is_smooth(edge, faces: list) -> bool:
    """An edge between two different faces meeting tangentially (G1 or smoother, as encoded): HLR's Rg1 lines."""
    return (len(faces) == 2 and not faces[0].IsSame(faces[1]) and BRep_Tool.HasContinuity_s(edge, faces[0], faces[1])
            and BRep_Tool.Continuity_s(edge, faces[0], faces[1]).value != GeomAbs_Shape.GeomAbs_C0.value)


def edge_samples(shape: TopoDS_Shape, tolerance: float, smooth_edges: bool = True) -> np.ndarray:
    """(n, 3) points along every (non-degenerate) edge of ``shape``, each edge within ``tolerance``.

    Sampled in 3D, independently of any projection: the model's projected extent in a view reaches at
    least as far as these points do, which is what a drawing's extent is checked against. With
    ``smooth_edges=False`` (a drawing rule that leaves them out) edges between tangent faces are skipped. Loose
    edges (of no face) are left out too: OCCT's hidden-line removal reports them only where they are visible, so a
    drawing cannot be required to reach their hidden parts.
    """
    faces_of = EdgeFaceMap()
    TopExp.MapShapesAndUniqueAncestors_s(shape, TopAbs_EDGE, TopAbs_FACE, faces_of)
    chunks = [np.zeros((0, 3))]
    for i in range(1, faces_of.Extent() + 1):
        edge = to_edge(faces_of.FindKey(i))
        if BRep_Tool.Degenerated_s(edge) or faces_of.FindFromIndex(i).Extent() == 0:
            continue
        if not smooth_edges and _is_smooth(edge, [to_face(f) for f in faces_of.FindFromIndex(i)]):
            continue
        curve = BRepAdaptor_Curve(edge)
        chunks.append(sample_curve(curve, curve.FirstParameter(), curve.LastParameter(), tolerance, 3))
    return np.concatenate(chunks)
