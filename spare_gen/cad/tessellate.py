"""Triangulate a shape's faces into one mesh (vertices, faces) for trimesh and point sampling."""

from __future__ import annotations

import numpy as np
from OCP.BRep import BRep_Tool
from OCP.BRepMesh import BRepMesh_IncrementalMesh
from OCP.TopAbs import TopAbs_FACE, TopAbs_REVERSED
from OCP.TopLoc import TopLoc_Location
from OCP.TopoDS import TopoDS_Shape

from spare_gen.cad.compat import indexed_subshapes, to_face

ANGULAR_DEFLECTION = 0.25  # radians: keeps small-radius arcs smooth when the linear tolerance is coarse


def triangulate(shape: TopoDS_Shape, deflection: float) -> tuple[np.ndarray, np.ndarray]:
    """Mesh every face with linear ``deflection`` (model units); return vertices (N,3) float64, faces (M,3) int64.

    Faces whose orientation is reversed get their triangles flipped, so normals point outwards on solids.
    Vertices are not merged across faces (trimesh's ``merge_vertices`` does that if needed).
    """
    if deflection <= 0:
        raise ValueError(f"deflection must be > 0 (got {deflection!r})")
    mesher = BRepMesh_IncrementalMesh(shape, float(deflection), False, ANGULAR_DEFLECTION, True)
    mesher.Perform()
    verts: list[np.ndarray] = []
    tris: list[np.ndarray] = []
    offset = 0
    for sub in indexed_subshapes(shape, TopAbs_FACE):
        face = to_face(sub)
        loc = TopLoc_Location()
        poly = BRep_Tool.Triangulation_s(face, loc)
        if poly is None or poly.NbTriangles() == 0:
            continue
        trsf = loc.Transformation()
        pts = np.array(
            [[p.X(), p.Y(), p.Z()] for p in (poly.Node(i).Transformed(trsf) for i in range(1, poly.NbNodes() + 1))],
            dtype=np.float64,
        )
        idx = np.array([poly.Triangle(i).Get() for i in range(1, poly.NbTriangles() + 1)], dtype=np.int64) - 1
        if face.Orientation() == TopAbs_REVERSED:
            idx = idx[:, [0, 2, 1]]
        verts.append(pts)
        tris.append(idx + offset)
        offset += len(pts)
    if not verts:
        return np.zeros((0, 3), np.float64), np.zeros((0, 3), np.int64)
    return np.concatenate(verts), np.concatenate(tris)
