"""Simple wireframe perturbations used by the metric property ("unit test") report.

These are deliberately small and exact (not the annotation-pool corruptions): each sequence builder
returns ``[gt, step1, step2, ...]`` where every step applies one more perturbation of the same kind, so a
good dissimilarity should strictly increase along the list. Vertices created by a perturbation are
CORNER-kind: they are visible bends or loose ends of the perturbed wireframe. Vertex-level perturbations
(move, delete) pick CORNER vertices when the wireframe has any, since those are the vertices whose
position or presence matters.
"""

from __future__ import annotations

import numpy as np

from spare_gen.metrics.sampling import clean_edges
from spare_gen.wireframe import CORNER, Wireframe


def normalise(wf: Wireframe) -> Wireframe:
    """Centre the bounding box at the origin and scale its diagonal to 1 (unchanged if it has no extent)."""
    if wf.n_vertices == 0:
        return wf
    lo, hi = wf.vertices.min(axis=0), wf.vertices.max(axis=0)
    diag = float(np.linalg.norm(hi - lo))
    scale = 1.0 / diag if diag > 0 else 1.0
    return Wireframe((wf.vertices - 0.5 * (lo + hi)) * scale, wf.edges, wf.kinds)


def relabel(wf: Wireframe, rng: np.random.Generator) -> Wireframe:
    """The same wireframe with vertices permuted, edges shuffled and randomly reversed."""
    perm = rng.permutation(wf.n_vertices)
    new_of_old = np.empty_like(perm)
    new_of_old[perm] = np.arange(wf.n_vertices)
    edges = new_of_old[wf.edges][rng.permutation(wf.n_edges)]
    flip = rng.random(len(edges)) < 0.5
    edges[flip] = edges[flip][:, ::-1]
    return Wireframe(wf.vertices[perm], edges, wf.kinds[perm])


def jitter(wf: Wireframe, rng: np.random.Generator, sigma: float, shift: float = 0.0) -> Wireframe:
    """Weighted zero-mean noise (per-vertex amplitude uniform in [0, sigma]) plus a random global shift."""
    amplitude = sigma * rng.random((wf.n_vertices, 1))
    noise = amplitude * rng.standard_normal((wf.n_vertices, 3))
    offset = shift * unit_vectors(rng.standard_normal(3))
    return Wireframe(wf.vertices + noise + offset, wf.edges, wf.kinds)


def translate(wf: Wireframe, offset: np.ndarray) -> Wireframe:
    return Wireframe(wf.vertices + offset, wf.edges, wf.kinds)


def remove_vertices(wf: Wireframe, idx: np.ndarray) -> Wireframe:
    """Delete vertices ``idx`` and every edge touching them."""
    keep = np.ones(wf.n_vertices, dtype=bool)
    keep[np.asarray(idx, dtype=np.int64)] = False
    new_index = np.cumsum(keep) - 1
    edges = wf.edges[keep[wf.edges].all(axis=1)] if wf.n_edges else wf.edges
    return Wireframe(wf.vertices[keep], new_index[edges], wf.kinds[keep])


def remove_edges(wf: Wireframe, idx: np.ndarray) -> Wireframe:
    keep = np.ones(wf.n_edges, dtype=bool)
    keep[np.asarray(idx, dtype=np.int64)] = False
    return Wireframe(wf.vertices, wf.edges[keep], wf.kinds)


def unit_vectors(v: np.ndarray) -> np.ndarray:
    """``v`` scaled to unit length along the last axis (zero vectors stay zero)."""
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 0, n, 1.0)


def _add_vertex(wf: Wireframe, point: np.ndarray, edges: np.ndarray) -> Wireframe:
    return Wireframe(np.vstack([wf.vertices, point]), edges, np.r_[wf.kinds, CORNER])


def _vertex_candidates(wf: Wireframe) -> np.ndarray:
    corners = np.nonzero(wf.kinds == CORNER)[0]
    return corners if len(corners) else np.arange(wf.n_vertices)


def wrong_edges_sequence(gt: Wireframe, rng: np.random.Generator, steps: int) -> list[Wireframe]:
    """Add one wrong edge per step: between two non-adjacent existing vertices, or, when no such pair is
    left, from an existing vertex to a new random point in the bounding box."""
    if gt.n_vertices == 0:
        return [gt]
    n = gt.n_vertices
    existing = set((clean_edges(gt)[:, 0] * n + clean_edges(gt)[:, 1]).tolist())
    draws = np.sort(rng.integers(0, n, size=(8 * steps + 16, 2)), axis=1)
    chosen: list[tuple[int, int]] = []
    for i, j in draws.tolist():
        if i != j and i * n + j not in existing and (i, j) not in chosen:
            chosen.append((i, j))
        if len(chosen) == steps:
            break
    seq, wf = [gt], gt
    lo, hi = gt.vertices.min(axis=0), gt.vertices.max(axis=0)
    for step in range(steps):
        if step < len(chosen):
            wf = Wireframe(wf.vertices, np.vstack([wf.edges, chosen[step]]), wf.kinds)
        else:
            point = lo + (hi - lo) * rng.random(3)
            anchor = int(rng.integers(0, n))
            wf = _add_vertex(wf, point, np.vstack([wf.edges, [anchor, wf.n_vertices]]))
        seq.append(wf)
    return seq


def deform_sequence(gt: Wireframe, rng: np.random.Generator, steps: int, offset: float) -> list[Wireframe]:
    """Per step, split one more *original* edge at its midpoint and push the new vertex ``offset`` sideways.

    Each step picks a GT edge not split before (never a piece of an earlier split), so every step breaks one
    more GT edge, as the paper's test does; a wireframe with fewer than ``steps`` edges gives a shorter list.
    """
    base = Wireframe(gt.vertices, clean_edges(gt), gt.kinds)
    picks = rng.permutation(base.n_edges)[:steps]
    seq, wf = [gt], base
    for k in picks:
        a, b = base.edges[k]
        pa, pb = base.vertices[a], base.vertices[b]
        d = unit_vectors(pb - pa)
        r = rng.standard_normal(3)
        side = unit_vectors(r - np.dot(r, d) * d)
        row = int(np.nonzero((wf.edges[:, 0] == a) & (wf.edges[:, 1] == b))[0][0])
        new = wf.n_vertices
        edges = np.vstack([np.delete(wf.edges, row, axis=0), [[a, new], [new, b]]])
        wf = _add_vertex(wf, 0.5 * (pa + pb) + offset * side, edges)
        seq.append(wf)
    return seq


def moving_sequence(gt: Wireframe, rng: np.random.Generator, steps: int, distance: float) -> list[Wireframe]:
    """Per step, move one more distinct vertex, the k-th by ``k * distance`` outwards.

    The displacement grows with the step, so the worst displacement (what Hausdorff sees) grows too, and
    with ``distance`` above the corner threshold each step unmatches one more vertex. "Outwards" is away
    from the vertex's own edges (minus the mean of the unit vectors along them), tilted at random by up to
    about 30 degrees, so the moved vertex's nearest GT point stays the vertex it left; an isolated vertex,
    or one whose edges cancel out, moves in a random direction. Candidates are the
    CORNER vertices when there are at least ``steps`` of them, else every vertex.
    """
    corners = np.nonzero(gt.kinds == CORNER)[0]
    cand = corners if len(corners) >= steps else np.arange(gt.n_vertices)
    picks = rng.permutation(cand)[:steps]
    edges = clean_edges(gt)
    along = np.zeros_like(gt.vertices)
    if len(edges):
        d = unit_vectors(gt.vertices[edges[:, 1]] - gt.vertices[edges[:, 0]])
        np.add.at(along, edges[:, 0], d)
        np.add.at(along, edges[:, 1], -d)
    random = unit_vectors(rng.standard_normal((len(picks), 3)))
    outward = -unit_vectors(along[picks])
    outward = np.where(np.linalg.norm(along[picks], axis=1, keepdims=True) > 1e-9, outward, random)
    moves = unit_vectors(outward + 0.5 * random)
    seq, verts = [gt], gt.vertices.copy()
    for k, (v, m) in enumerate(zip(picks, moves), start=1):
        verts = verts.copy()
        verts[v] += k * distance * m
        seq.append(Wireframe(verts, gt.edges, gt.kinds))
    return seq


def disconnect_sequence(gt: Wireframe, rng: np.random.Generator, steps: int, gap: float) -> list[Wireframe]:
    """Per step, detach one edge from a vertex of degree >= 2: its end moves ``gap`` along the edge onto a
    new vertex, leaving a small break in the wireframe."""
    seq, wf = [gt], Wireframe(gt.vertices, clean_edges(gt), gt.kinds)
    for _ in range(steps):
        if wf.n_edges == 0:
            break
        degree = np.bincount(wf.edges.ravel(), minlength=wf.n_vertices)
        lengths = wf.edge_lengths()
        # incidences (edge k, end s) whose vertex keeps another edge and whose edge outlasts the gap
        ok = (degree[wf.edges] >= 2) & (lengths[:, None] > 2 * gap)
        ks, ss = np.nonzero(ok)
        if len(ks) == 0:
            break
        c = int(rng.integers(0, len(ks)))
        k, s = ks[c], ss[c]
        v, other = wf.edges[k, s], wf.edges[k, 1 - s]
        point = wf.vertices[v] + gap * unit_vectors(wf.vertices[other] - wf.vertices[v])
        edges = wf.edges.copy()
        edges[k, s] = wf.n_vertices
        wf = _add_vertex(wf, point, edges)
        seq.append(wf)
    return seq


def delete_vertices_sequence(gt: Wireframe, rng: np.random.Generator, steps: int) -> list[Wireframe]:
    """Delete one more distinct vertex (and its edges) per step."""
    picks = rng.permutation(_vertex_candidates(gt))[:steps]
    return [gt] + [remove_vertices(gt, picks[: k + 1]) for k in range(len(picks))]


def delete_edges_sequence(gt: Wireframe, rng: np.random.Generator, steps: int) -> list[Wireframe]:
    """Delete one more distinct edge per step."""
    base = Wireframe(gt.vertices, clean_edges(gt), gt.kinds)
    picks = rng.permutation(base.n_edges)[:steps]
    return [gt] + [remove_edges(base, picks[: k + 1]) for k in range(len(picks))]


def drop_edge_fraction(gt: Wireframe, rng: np.random.Generator, fraction: float) -> Wireframe:
    """Delete a random ``fraction`` of the (clean) edges, at least one when there are any."""
    base = Wireframe(gt.vertices, clean_edges(gt), gt.kinds)
    n = min(base.n_edges, max(1, int(round(fraction * base.n_edges))))
    return remove_edges(base, rng.permutation(base.n_edges)[:n])
