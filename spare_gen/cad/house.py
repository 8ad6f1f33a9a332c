"""Build a house B-rep as the union of convex polyhedra (blocks, dormers, chimneys) given by their corner points.

Each part is the convex hull of its points: hull facets on one plane become one planar polygon face,
the faces are sewn into a closed shell and made a solid. The parts are fused one after another, then
coplanar faces and collinear edges are merged (``ShapeUpgrade_UnifySameDomain``), so a wall that runs
on from one block into the next is one face with no split line in its middle.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from OCP.BRepAlgoAPI import BRepAlgoAPI_Fuse
from OCP.BRepBuilderAPI import (
    BRepBuilderAPI_MakeFace,
    BRepBuilderAPI_MakePolygon,
    BRepBuilderAPI_MakeSolid,
    BRepBuilderAPI_Sewing,
)
from OCP.BRepClass3d import BRepClass3d_SolidClassifier
from OCP.gp import gp_Pnt
from OCP.ShapeUpgrade import ShapeUpgrade_UnifySameDomain
from OCP.TopAbs import TopAbs_IN, TopAbs_SHELL
from OCP.TopExp import TopExp_Explorer
from OCP.TopoDS import TopoDS, TopoDS_Shape
from scipy.spatial import ConvexHull

from spare_gen.cad.build import solids

PLANE_DECIMALS = 9  # hull facets whose plane equations agree to this many decimals are one face
SEWING_TOLERANCE = 1e-7


class HouseError(ValueError):
    """A house whose parts cannot be built into one valid solid."""


def hull_faces(points: np.ndarray) -> list[np.ndarray]:
    """The planar faces of the hull of ``points``: each a (K, 3) polygon, counter-clockwise seen from outside."""
    points = np.asarray(points, dtype=np.float64)
    hull = ConvexHull(points)
    groups: dict[tuple, set[int]] = {}
    normals: dict[tuple, np.ndarray] = {}
    for simplex, equation in zip(hull.simplices, hull.equations):
        key = tuple(np.round(equation, PLANE_DECIMALS) + 0.0)
        groups.setdefault(key, set()).update(int(i) for i in simplex)
        normals[key] = equation[:3]
    faces = []
    for key in sorted(groups):
        idx = np.array(sorted(groups[key]))
        poly = points[idx]
        normal = normals[key]
        centre = poly.mean(axis=0)
        u = poly[0] - centre
        u /= np.linalg.norm(u)
        v = np.cross(normal, u)
        d = poly - centre
        order = np.argsort(np.arctan2(d @ v, d @ u), kind="stable")
        faces.append(poly[order])
    return faces


def convex_solid(points: np.ndarray) -> TopoDS_Shape:
    """The convex hull of ``points`` as a closed, outward-oriented B-rep solid."""
    sewing = BRepBuilderAPI_Sewing(SEWING_TOLERANCE)
    for poly in hull_faces(points):
        polygon = BRepBuilderAPI_MakePolygon()
        for p in poly:
            polygon.Add(gp_Pnt(*map(float, p)))
        polygon.Close()
        sewing.Add(BRepBuilderAPI_MakeFace(polygon.Wire(), True).Face())
    sewing.Perform()
    explorer = TopExp_Explorer(sewing.SewedShape(), TopAbs_SHELL)
    if not explorer.More():
        raise HouseError("a house part's faces do not close into a shell")
    solid = BRepBuilderAPI_MakeSolid(TopoDS.Shell(explorer.Current())).Solid()
    classifier = BRepClass3d_SolidClassifier(solid)
    classifier.PerformInfinitePoint(1e-9)
    if classifier.State() == TopAbs_IN:  # the shell faces inwards: turn it over
        solid.Reverse()
    return solid


def build_house(parts: Sequence[np.ndarray]) -> TopoDS_Shape:
    """The union of the convex parts (each an (N, 3) array of corner points) as one solid with merged faces."""
    if not parts:
        raise HouseError("a house needs at least one part")
    shapes = [convex_solid(p) for p in parts]
    if len(shapes) == 1:
        shape = shapes[0]
    else:
        shape = shapes[0]
        for i, other in enumerate(shapes[1:], start=1):
            fuse = BRepAlgoAPI_Fuse(shape, other)
            if not fuse.IsDone():
                raise HouseError(f"fusing house part {i} failed in OpenCASCADE")
            shape = fuse.Shape()
    unify = ShapeUpgrade_UnifySameDomain(shape, True, True, True)
    unify.Build()
    shape = unify.Shape()
    found = solids(shape)
    if len(found) != 1:
        raise HouseError(f"the house parts make {len(found)} solids, not one")
    return found[0]
