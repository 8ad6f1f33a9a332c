"""Pool stage, child side: ground-truth wireframes from B-reps (vertex merging, normalisation, the row).

The OpenCASCADE part (walking B-rep edges, discretising curves) is ``spare_gen.cad.edge_graph``, which
returns a raw graph; this module interprets it (point kinds, merging, normalisation) with numpy. It runs in
the killable child (``extract_unit``), so it imports ``spare_gen.cad`` at the top; the Dask worker side
(``spare_gen.stages.pool.driver``) names it by string and never imports it.

Normalisation: ``normalised = (model - centre) / scale`` where ``centre`` is the centre of the
wireframe's own axis-aligned bounding box and ``scale`` its diagonal (model units), so every
ground truth has bounding-box diagonal 1 and the metric thresholds (2 % of the diagonal) mean the
same on every model. ``model = normalised * scale + centre`` undoes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from spare_gen.cad.io import read_shape
from spare_gen.cad.props import bounding_box
from spare_gen.cad.edge_graph import brep_graph
from spare_gen.config.schema import HouseWireframe, PoolConfig
from spare_gen.rating.houses import house_vertex_kinds
from spare_gen.stages.pool.schema import WireframeRow
from spare_gen.stages.pool.settings import WireframeSettings, WireframeUnit
from spare_gen.runner.isolation import Status
from spare_gen.wireframe import CORNER, CURVE, Wireframe, corner_mask

DEFAULT_DEFLECTION = PoolConfig.model_fields["deflection"].default  # chord tolerance, fraction of the diagonal
MERGE_TOLERANCE = 1e-6  # points closer than this (fraction of the diagonal) are one vertex


@dataclass(frozen=True)
class ExtractedWireframe:
    """A normalised ground-truth wireframe and the transform back to model units.

    ``dropped`` counts B-rep edges left out, by reason (see ``spare_gen.cad.edge_graph.DropReason``).
    """

    vertices: np.ndarray  # (N, 3) float64, normalised
    edges: np.ndarray  # (M, 2) int64
    kinds: np.ndarray  # (N,) uint8, CORNER / CURVE (houses: CORNER / RIDGE / EAVE)
    centre: np.ndarray  # (3,) model units
    scale: float  # model units per normalised unit (the model-space bounding-box diagonal)
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def wireframe(self) -> Wireframe:
        return Wireframe(self.vertices, self.edges, self.kinds)

    def to_model_units(self) -> np.ndarray:
        return denormalise(self.vertices, self.centre, self.scale)


def merge_close_points(
    points: np.ndarray, kinds: np.ndarray, edges: np.ndarray, tolerance: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge points closer than ``tolerance`` (transitively), drop unused points, self-loops and repeated edges.

    A merged point takes the position of its first member and the smallest kind among its members other
    than CURVE (a CURVE point only if every member is one).
    Vertices are numbered by first use along ``edges`` and edges keep their first occurrence, so the
    output is a pure function of the input order.
    """
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    kinds = np.asarray(kinds, dtype=np.uint8).reshape(-1)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    n = len(points)
    if n == 0 or len(edges) == 0:
        return np.zeros((0, 3)), np.zeros(0, dtype=np.uint8), np.zeros((0, 2), dtype=np.int64)
    pairs = cKDTree(points).query_pairs(tolerance, output_type="ndarray") if tolerance > 0 else np.zeros((0, 2), int)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    label = connected_components(graph, directed=False)[1]
    first = np.full(label.max() + 1, n, dtype=np.int64)
    np.minimum.at(first, label, np.arange(n))
    group_kind = np.full(label.max() + 1, 255, dtype=np.uint8)
    np.minimum.at(group_kind, label, np.where(kinds == CURVE, 254, kinds).astype(np.uint8))
    group_kind[group_kind == 254] = CURVE

    e = label[edges]
    e = e[e[:, 0] != e[:, 1]]
    _, keep = np.unique(np.sort(e, axis=1), axis=0, return_index=True)
    e = e[np.sort(keep)]
    used, order = np.unique(e.ravel(), return_index=True)
    used = used[np.argsort(order, kind="stable")]  # groups in order of first use
    renumber = np.full(label.max() + 1, -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    return points[first[used]], group_kind[used], renumber[e]


def normalise(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(normalised points, bounding-box centre, bounding-box diagonal); raise if the points span nothing."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(points) == 0:
        raise ValueError("cannot normalise an empty wireframe")
    lo, hi = points.min(axis=0), points.max(axis=0)
    centre = (lo + hi) / 2.0
    scale = float(np.linalg.norm(hi - lo))
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"cannot normalise a wireframe whose bounding-box diagonal is {scale}")
    return (points - centre) / scale, centre, scale


def denormalise(vertices: np.ndarray, centre: np.ndarray, scale: float) -> np.ndarray:
    return np.asarray(vertices, dtype=np.float64) * float(scale) + np.asarray(centre, dtype=np.float64)


def finish_wireframe(
    points: np.ndarray,
    kinds: np.ndarray,
    edges: np.ndarray,
    size: float,
    merge_tolerance: float = MERGE_TOLERANCE,
    dropped: dict[str, int] | None = None,
) -> ExtractedWireframe:
    """Merge points within ``merge_tolerance * size`` (model units), then normalise; raise if nothing is left."""
    pts, knd, edg = merge_close_points(points, kinds, edges, merge_tolerance * size)
    if len(edg) == 0:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted((dropped or {}).items()) if v) or "none"
        raise ValueError(f"the shape has no feature edges for a wireframe (edges dropped: {reasons})")
    vertices, centre, scale = normalise(pts)
    return ExtractedWireframe(vertices, edg, knd, centre, scale, dict(dropped or {}))


def brep_wireframe(
    shape, deflection: float = DEFAULT_DEFLECTION, *, keep_seams: bool = False,
    merge_tolerance: float = MERGE_TOLERANCE,
) -> ExtractedWireframe:
    """The normalised wireframe of a TopoDS ``shape``; ``deflection`` and ``merge_tolerance`` are fractions of
    the shape's bounding-box diagonal. Raises ``ValueError`` when no feature edge is left (a sphere, a torus)."""
    lo_hi = np.asarray(bounding_box(shape))
    size = float(np.linalg.norm(lo_hi[3:] - lo_hi[:3]))
    if not np.isfinite(size) or size <= 0:
        raise ValueError(f"the shape's bounding box is empty or infinite (diagonal {size})")
    graph = brep_graph(shape, deflection * size, keep_seams=keep_seams, min_length=merge_tolerance * size)
    kinds = np.where(graph.on_curve, CURVE, CORNER).astype(np.uint8)
    return finish_wireframe(graph.points, kinds, graph.edges, size, merge_tolerance, graph.dropped)


def wireframe_row(model_id: str, extracted: ExtractedWireframe) -> WireframeRow:
    """The wireframes.parquet row of one extracted ground truth (timing added by the caller)."""
    wf = extracted.wireframe
    return WireframeRow(
        model_id=model_id, status=Status.OK, error="", **wf.to_row(),
        n_corners=int(np.count_nonzero(corner_mask(wf.kinds))),
        centre=[float(c) for c in extracted.centre],
        scale=float(extracted.scale),
        dropped_edges=json.dumps({k: int(v) for k, v in sorted(extracted.dropped.items())}),
    )


def with_house_kinds(extracted: ExtractedWireframe, house: dict, roof_only: bool = False) -> ExtractedWireframe:
    """The wireframe of a procedural house with its vertices' roof kinds (ridge, eave, corner).

    ``roof_only``: without the edges that touch the ground (ground outline, walls below the eaves), normalised
    again to the bounding box of what is left. Kinds are read on the whole building first (a flat roof's
    corners are eaves because a wall goes down from them).
    """
    points = extracted.to_model_units()
    kinds = house_vertex_kinds(points, extracted.edges, house)
    if not roof_only:
        return replace(extracted, kinds=kinds)
    ground = np.isclose(points[:, 2], points[:, 2].min(), rtol=0.0, atol=MERGE_TOLERANCE * extracted.scale)
    edges = extracted.edges[~ground[extracted.edges].any(axis=1)]
    return finish_wireframe(points, kinds, edges, extracted.scale, dropped=extracted.dropped)


def extract_unit(unit: WireframeUnit, settings: WireframeSettings, rng: np.random.Generator) -> WireframeRow:
    """The wireframes stage's child function (no randomness: ``rng`` is unused)."""
    house = json.loads(unit["house"]) if unit.get("house") else None
    roof_only = settings.house_wireframe is HouseWireframe.ROOF
    return extract_wireframe(unit["model_id"], unit["shape_path"], settings.deflection, house, roof_only)


def extract_wireframe(model_id: str, shape_path: str, deflection: float = DEFAULT_DEFLECTION,
                      house: dict | None = None, roof_only: bool = False) -> WireframeRow:
    """Read one BREP file and return its wireframes.parquet row (``house``: the model's house description, whose
    vertices then carry roof kinds; ``roof_only``: only the house's roof edges)."""
    extracted = brep_wireframe(read_shape(shape_path), deflection)
    if house is not None:
        extracted = with_house_kinds(extracted, house, roof_only)
    return wireframe_row(model_id, extracted)
