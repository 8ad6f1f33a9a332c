"""The wireframe graph: 3D vertices, undirected edges between them, and a kind per vertex."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CORNER = 0  # a B-rep vertex (an end of a CAD edge); on a house: a wall, ground or chimney corner
CURVE = 1  # an inner point of a curved edge discretised into straight segments
RIDGE = 2  # a house's B-rep vertex at the top of its roof slopes (ridge ends, hip apex, a shed's high edge)
EAVE = 3  # a house's B-rep vertex at the foot of its roof slopes, or a flat roof's corner
KIND_NAMES = {CORNER: "corner", CURVE: "curve", RIDGE: "ridge", EAVE: "eave"}


def corner_mask(kinds: np.ndarray) -> np.ndarray:
    """True for B-rep vertices (every kind but CURVE): the vertices corner-only metrics compare."""
    return np.asarray(kinds) != CURVE


@dataclass(frozen=True)
class Wireframe:
    """``vertices`` (N, 3) float64, ``edges`` (M, 2) int64 indices into ``vertices``, ``kinds`` (N,) uint8.

    Edges are undirected: (i, j) and (j, i) are the same edge. Construction only normalises dtypes and
    shapes; use :meth:`validate` to check indices, NaN and emptiness.
    """

    vertices: np.ndarray
    edges: np.ndarray
    kinds: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        v = np.asarray(self.vertices, dtype=np.float64).reshape(-1, 3)
        e = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        k = (
            np.zeros(len(v), dtype=np.uint8)
            if self.kinds is None
            else np.asarray(self.kinds, dtype=np.uint8).reshape(-1)
        )
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "edges", e)
        object.__setattr__(self, "kinds", k)

    @property
    def n_vertices(self) -> int:
        return int(len(self.vertices))

    @property
    def n_edges(self) -> int:
        return int(len(self.edges))

    def validate(self, *, allow_empty: bool = False) -> "Wireframe":
        """Raise ``ValueError`` naming the problem; return self when the wireframe is well formed."""
        if not allow_empty and self.n_vertices == 0:
            raise ValueError("wireframe is empty: it has no vertices")
        if len(self.kinds) != self.n_vertices:
            raise ValueError(f"wireframe has {self.n_vertices} vertices but {len(self.kinds)} vertex kinds")
        if not np.all(np.isfinite(self.vertices)):
            bad = np.unique(np.nonzero(~np.isfinite(self.vertices))[0])
            raise ValueError(f"wireframe has NaN or infinite coordinates at vertices {bad[:10].tolist()}")
        if self.n_edges:
            lo, hi = int(self.edges.min()), int(self.edges.max())
            if lo < 0 or hi >= self.n_vertices:
                bad = self.edges[(self.edges < 0).any(1) | (self.edges >= self.n_vertices).any(1)]
                raise ValueError(
                    f"wireframe edges point to missing vertices (valid 0..{self.n_vertices - 1}): "
                    f"{bad[:5].tolist()}"
                )
        return self

    def segments(self) -> np.ndarray:
        """(M, 2, 3) array of edge end points."""
        return self.vertices[self.edges]

    def edge_lengths(self) -> np.ndarray:
        if self.n_edges == 0:
            return np.zeros(0)
        s = self.segments()
        return np.linalg.norm(s[:, 1] - s[:, 0], axis=1)

    def canonical_edges(self) -> np.ndarray:
        """Edges with i <= j in each row (direction-free identity), in input order."""
        return np.sort(self.edges, axis=1)

    def to_row(self) -> dict:
        """Plain lists for a Parquet row."""
        return {
            "vertices": self.vertices.tolist(),
            "edges": self.edges.tolist(),
            "vertex_kinds": self.kinds.tolist(),
            "n_vertices": self.n_vertices,
            "n_edges": self.n_edges,
        }

    @classmethod
    def from_row(cls, row: dict) -> "Wireframe":
        kinds = row.get("vertex_kinds")
        verts = np.asarray(list(row["vertices"]) if len(row["vertices"]) else np.zeros((0, 3)), dtype=np.float64)
        edges = np.asarray(list(row["edges"]) if len(row["edges"]) else np.zeros((0, 2)), dtype=np.int64)
        return cls(verts, edges, None if kinds is None else np.asarray(list(kinds), dtype=np.uint8))
