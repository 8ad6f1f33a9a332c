"""OCP version differences in one place (tested with OCP 8.0.1: cadquery-ocp-novtk 8.0.1.1).

OCP 8.0 moved ``TopTools_IndexedMapOfShape`` to ``OCP.collections`` and renamed the static
``TopoDS.Edge_s`` family to ``TopoDS.Edge``; other static methods keep the ``_s`` suffix.
"""

from __future__ import annotations

from OCP.TopAbs import TopAbs_ShapeEnum
from OCP.TopExp import TopExp
from OCP.TopoDS import TopoDS, TopoDS_Shape

try:  # OCP >= 8.0
    from OCP.collections import IndexedDataMap_TopoDS_Shape_List_TopoDS_Shape_TopTools_ShapeMapHasher as EdgeFaceMap
    from OCP.collections import IndexedMap_TopoDS_Shape_TopTools_ShapeMapHasher as IndexedShapeMap
except ImportError:  # pragma: no cover - OCP 7.x
    from OCP.TopTools import TopTools_IndexedDataMapOfShapeListOfShape as EdgeFaceMap  # type: ignore[no-redef]
    from OCP.TopTools import TopTools_IndexedMapOfShape as IndexedShapeMap  # type: ignore[no-redef]


def _cast(name: str):
    return getattr(TopoDS, name, None) or getattr(TopoDS, name + "_s")


to_edge = _cast("Edge")
to_face = _cast("Face")
to_vertex = _cast("Vertex")


def indexed_subshapes(shape: TopoDS_Shape, kind: TopAbs_ShapeEnum) -> list[TopoDS_Shape]:
    """Distinct sub-shapes of one kind, in OCCT's stable exploration order."""
    m = IndexedShapeMap()
    TopExp.MapShapes_s(shape, kind, m)
    return [m.FindKey(i) for i in range(1, m.Extent() + 1)]
