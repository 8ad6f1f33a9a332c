"""Per-model preparation for hidden-line removal: fuse solids, split risky seams, encode edge continuity, sample edges."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, repeat

import numpy as np

from OCP.Bnd import Bnd_Box
from OCP.BRep import BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve, BRepAdaptor_Surface
from OCP.BRepBndLib import BRepBndLib
from OCP.BRepCheck import BRepCheck_Analyzer
from OCP.BRepGProp import BRepGProp
from OCP.BRepLib import BRepLib
from OCP.GeomAbs import GeomAbs_Shape, GeomAbs_SurfaceType
from OCP.GProp import GProp_GProps
from OCP.gp import gp_Pnt
from OCP.Poly import Poly_Triangle
from OCP.ShapeFix import ShapeFix_Shape
from OCP.ShapeUpgrade import ShapeUpgrade_ShapeDivideClosed
from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE
from OCP.TopExp import TopExp, TopExp_Explorer
from OCP.TopLoc import TopLoc_Location
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.build import fuse_all, loose_edges, without_loose_edges
from spare_gen.cad.compat import EdgeFaceMap, IndexedShapeMap, indexed_subshapes, to_edge, to_face
from spare_gen.cad.sampling import sample_curves

# Faces meeting at an edge within this angle (radians) count as tangent (G1) when encoding regularity.
REGULARITY_ANGLE = 1e-6
# a curved face whose triangles cover less than this share of its area was only partly meshed (chords make a
# complete mesh a few thousandths smaller than the surface; a bare half of a trimmed torus was seen at 0.63)
MESH_COVERAGE = 0.9
# Surfaces whose seams exact HLR draws right even when the seam lies on the silhouette (checked on
# every CSG orientation against the mesh algorithm). On others (tori above all) such a seam comes
# out hidden and the silhouette is missing, so their closed faces are split in two first.
SEAM_SAFE_SURFACES = frozenset(
    {GeomAbs_SurfaceType.GeomAbs_Plane, GeomAbs_SurfaceType.GeomAbs_Cylinder,
     GeomAbs_SurfaceType.GeomAbs_Cone, GeomAbs_SurfaceType.GeomAbs_Sphere}
)


@dataclass(frozen=True)
class PreparedShape:
    """``base``: fused, continuity encoded. ``exact``: the same with risky closed faces split (or ``base``).
    ``faces``: the shape as given without its loose edges, before fusing (the solid every view must show).
    ``loose_edges``: how many edges of the shape as given bound no face (drawn only when kept)."""

    base: TopoDS_Shape
    exact: TopoDS_Shape
    faces: TopoDS_Shape
    loose_edges: int = 0

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


def prepare_shape(shape: TopoDS_Shape, split_seams: bool = True, loose_edges: bool = False) -> PreparedShape:
    """Leave out loose edges (unless ``loose_edges``), fuse overlapping solids, encode edge continuity, and split
    risky closed faces for exact HLR.

    Loose edges (edges that bound no face: datum axes, construction lines as Pro/E and CATIA exports hold, free in a
    compound, held INTERNAL or EXTERNAL by a solid or a face; ``build.loose_edges``) are no part of the solid a
    drawing shows; kept, they are drawn where visible and frame the drawing. With continuity
    encoded, HLR tells seams and splits inside one smooth surface (RgN, not drawn) from tangent edges (Rg1, drawn)
    and creases (sharp, drawn).
    """
    faces, loose = without_loose_edges(shape)
    base = fuse_all(shape if loose_edges else faces)
    BRepLib.EncodeRegularity_s(base, REGULARITY_ANGLE)
    exact = split_closed_faces(base) if split_seams and has_risky_seam(base) else None
    if exact is None:
        return PreparedShape(base, base, faces, loose)
    BRepLib.EncodeRegularity_s(exact, REGULARITY_ANGLE)
    return PreparedShape(base, exact, faces, loose)


def has_edges(shape: TopoDS_Shape) -> bool:
    return TopExp_Explorer(shape, TopAbs_EDGE).More()


def has_faces(shape: TopoDS_Shape) -> bool:
    return TopExp_Explorer(shape, TopAbs_FACE).More()


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


@dataclass(frozen=True)
class EdgeLines:
    """Every non-degenerate edge of a shape as a (k, 3) polyline within the curve tolerance (in the order of
    TopExp's edge map), with its classes: ``loose`` (it bounds no face, ``build.loose_edges``), ``smooth`` (between tangent faces)."""

    polylines: list[np.ndarray]
    loose: list[bool]
    smooth: list[bool]

    def select(self, smooth_edges: bool = True, loose: bool = False) -> list[np.ndarray]:
        """The polylines of the edges a rule draws: smooth ones only with ``smooth_edges``, loose ones only with
        ``loose``."""
        return [p for p, is_loose, is_smooth in zip(self.polylines, self.loose, self.smooth)
                if (loose or not is_loose) and (smooth_edges or not is_smooth)]


def classified_edge_polylines(shape: TopoDS_Shape, tolerance: float) -> EdgeLines:
    """``EdgeLines`` of ``shape``: each edge sampled once (all together, ``sampling.sample_curves``), for every
    caller that wants some class of them (the extent check, the stray check's outline)."""
    faces_of = EdgeFaceMap()
    TopExp.MapShapesAndUniqueAncestors_s(shape, TopAbs_EDGE, TopAbs_FACE, faces_of)
    unbounded = IndexedShapeMap()  # edges a face holds INTERNAL or EXTERNAL, bounding none (loose too)
    for edge in loose_edges(shape):
        unbounded.Add(edge)
    curves, loose, smooth = [], [], []
    for i in range(1, faces_of.Extent() + 1):
        edge = to_edge(faces_of.FindKey(i))
        if BRep_Tool.Degenerated_s(edge):
            continue
        faces = faces_of.FindFromIndex(i)
        loose.append(faces.Extent() == 0 or unbounded.Contains(edge))
        # two faces at most matter: First/Last (iterating an OCP list of shapes costs ~0.3 ms)
        smooth.append(faces.Extent() == 2 and _is_smooth(edge, [to_face(faces.First()), to_face(faces.Last())]))
        curve = BRepAdaptor_Curve(edge)
        curves.append((curve, curve.FirstParameter(), curve.LastParameter()))
    return EdgeLines(sample_curves(curves, tolerance, 3), loose, smooth)


def edge_samples(shape: TopoDS_Shape, tolerance: float, smooth_edges: bool = True,
                 edges: EdgeLines | None = None) -> np.ndarray:
    """(n, 3) points along every (non-degenerate) edge of ``shape``, each edge within ``tolerance``.

    Sampled in 3D, independently of any projection: the model's projected extent in a view reaches at
    least as far as these points do, which is what a drawing's extent is checked against. With
    ``smooth_edges=False`` (a drawing rule that leaves them out) edges between tangent faces are skipped. Loose
    edges (of no face) are left out too: OCCT's hidden-line removal reports them only where they are visible, so a
    drawing cannot be required to reach their hidden parts. ``edges``: the shape's ``classified_edge_polylines``
    at ``tolerance`` if already sampled.
    """
    edges = classified_edge_polylines(shape, tolerance) if edges is None else edges
    return np.concatenate([np.zeros((0, 3)), *edges.select(smooth_edges)])


@dataclass(frozen=True)
class Folds:
    """Interior edges of the triangulations of a shape's curved faces, with the normals of the triangles on each
    side: where one faces the viewer and the other does not, the edge lies on the view's silhouette (within the
    mesh's deflection), which a drawing may show although it is no edge of the model."""

    ends: np.ndarray  # (m, 2, 3) the edge's two nodes
    normals: np.ndarray  # (m, 2, 3) the (unnormalised) normals of the triangles on its two sides
    # (k, 3) every node that ends a fold, once per face (``ends`` holds each node once per fold it ends: some 5
    # times): the same extent in every direction for a fifth of the points
    nodes: np.ndarray
    # each curved face with its triangles' normals (None: no triangles), in face order, for ``complete``
    faces: tuple[tuple[TopoDS_Shape, np.ndarray | None], ...] = field(default=(), repr=False, compare=False)

    @cached_property
    def complete(self) -> bool:
        """False when BRepMesh left part of a curved face untriangulated (its triangles cover less than MESH_COVERAGE
        of its area): the silhouettes there are unknown, so no line can be called stray for lying off these folds.
        Found when first asked, face by face until one is partly bare: each face's area is an integral over its
        surface (``BRepGProp``), and the stray check asks only about a view it cannot pass at a glance."""
        return all(_covered(face, normals) for face, normals in self.faces)

    def silhouette(self, direction: np.ndarray) -> np.ndarray:
        """(s, 2, 3) the edges on the silhouette seen along ``direction``."""
        facing = self.normals @ direction
        return self.ends[facing[:, 0] * facing[:, 1] <= 0.0]


def _triangulation(face) -> tuple[np.ndarray, np.ndarray] | None:
    """(nodes (n, 3) placed by the face's location, triangles (t, 3) of 0-based node indices) of a face triangulated
    into two triangles or more, each read through one iterator into one array (no Python list per node)."""
    location = TopLoc_Location()
    triangulation = BRep_Tool.Triangulation_s(face, location)
    if triangulation is None or triangulation.NbTriangles() < 2:
        return None
    n, t = triangulation.NbNodes(), triangulation.NbTriangles()
    points = map(triangulation.Node, range(1, n + 1))
    if not location.IsIdentity():  # (an identity location moves no node: gp_Pnt.Transformed leaves it as it is)
        points = map(gp_Pnt.Transformed, points, repeat(location.Transformation()))
    nodes = np.fromiter(chain.from_iterable(map(gp_Pnt.Coord, points)), dtype=float, count=3 * n).reshape(n, 3)
    corners = chain.from_iterable(map(Poly_Triangle.Get, map(triangulation.Triangle, range(1, t + 1))))
    return nodes, np.fromiter(corners, dtype=np.int64, count=3 * t).reshape(t, 3) - 1


def _covered(face, triangle_normals: np.ndarray | None) -> bool:
    """Whether the face's triangles cover MESH_COVERAGE of its area (BRepMesh can leave a trimmed face half bare)."""
    props = GProp_GProps()
    BRepGProp.SurfaceProperties_s(face, props)
    meshed = 0.0 if triangle_normals is None else 0.5 * float(np.linalg.norm(triangle_normals, axis=1).sum())
    return meshed >= MESH_COVERAGE * props.Mass()


def mesh_folds(shape: TopoDS_Shape) -> Folds:
    """The ``Folds`` of every non-planar face of ``shape``, which must already be triangulated (BRepMesh).

    Every face's triangles go through one numpy pass, their node indices offset face after face (so an edge found
    twice is two triangles of one face, and the folds come face by face, in face order).
    """
    nodes, tris, checked, offset = [np.zeros((0, 3))], [np.zeros((0, 3), dtype=np.int64)], [], 0
    for face in indexed_subshapes(shape, TopAbs_FACE):
        face = to_face(face)
        if BRepAdaptor_Surface(face, False).GetType() == GeomAbs_SurfaceType.GeomAbs_Plane:
            continue  # a plane has no silhouette inside its edges
        mesh = _triangulation(face)
        checked.append((face, 0 if mesh is None else len(mesh[1])))
        if mesh is not None:
            nodes.append(mesh[0])
            tris.append(mesh[1] + offset)
            offset += len(mesh[0])
    nodes, tris = np.concatenate(nodes), np.concatenate(tris)
    normals = np.cross(nodes[tris[:, 1]] - nodes[tris[:, 0]], nodes[tris[:, 2]] - nodes[tris[:, 0]])
    starts = np.cumsum([0] + [count for _, count in checked]).tolist()
    faces = tuple((face, normals[start:start + count] if count else None)
                  for (face, count), start in zip(checked, starts))
    sides = np.sort(tris[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)  # each triangle's three edges
    owner = np.repeat(np.arange(len(tris)), 3)
    order = np.lexsort((sides[:, 1], sides[:, 0]))
    sides, owner = sides[order], owner[order]
    twice = np.flatnonzero((sides[1:] == sides[:-1]).all(axis=1))  # an edge shared by two triangles
    return Folds(nodes[sides[twice]], np.stack([normals[owner[twice]], normals[owner[twice + 1]]], axis=1),
                 nodes[np.unique(sides[twice])], faces)
