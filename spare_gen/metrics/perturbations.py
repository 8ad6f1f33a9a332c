"""Simple wireframe perturbations used by the metric property ("unit test") report.

These are deliberately small and exact (not the annotation-pool corruptions): each sequence builder
returns ``[gt, step1, step2, ...]`` where every step applies one more perturbation of the same kind, so a
good dissimilarity should strictly increase along the list. Vertices created by a perturbation are
CORNER-kind: they are visible bends or loose ends of the perturbed wireframe. Vertex-level perturbations
(move, delete) pick B-rep vertices (every kind but CURVE) when the wireframe has any, since those are
the vertices whose position or presence matters.
"""

from __future__ import annotations

import numpy as np

from spare_gen.metrics.sampling import clean_edges, point_segment_distance
from spare_gen.wireframe import CORNER, Wireframe, corner_mask


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
    corners = np.nonzero(corner_mask(wf.kinds))[0]
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


def moving_sequence(
    gt: Wireframe, rng: np.random.Generator, steps: int, distance: float, growth: float = 0.0, tries: int = 16
) -> list[Wireframe]:
    """Per step, move one more distinct vertex, the k-th by ``distance + (k - 1) * growth``, so that the move shows.

    Each move is built to be seen by every metric the paper expects to notice it: the moved vertex keeps an
    edge to a vertex not moved (so one more GT edge breaks each step), its direction is at least 90 degrees
    from each of its own edges (so the moved point is exactly its displacement away from them), and it ends at
    least its displacement away from every other GT edge (so its nearest GT point is the vertex it left, and
    the worst displacement, what Hausdorff measures, grows every step). Directions are drawn around "outward"
    (minus the mean of the unit vectors along its edges), ``tries`` per vertex; a vertex with no such
    direction, or whose edges all lead to moved vertices, is skipped, so a small or crowded wireframe can
    give fewer than ``steps`` steps. Candidates are the CORNER vertices when there are at least ``steps`` of
    them, else every vertex.
    """
    corners = np.nonzero(corner_mask(gt.kinds))[0]
    cand = corners if len(corners) >= steps else np.arange(gt.n_vertices)
    order = rng.permutation(cand)
    edges = clean_edges(gt)
    seg = gt.vertices[edges] if len(edges) else np.zeros((0, 2, 3))
    seq, verts = [gt], gt.vertices.copy()
    moved = np.zeros(gt.n_vertices, dtype=bool)
    for v in order:
        if len(seq) > steps:
            break
        own = (edges[:, 0] == v) | (edges[:, 1] == v)
        others = np.where(edges[own, 0] == v, edges[own, 1], edges[own, 0])
        if len(edges) and not (~moved[others]).any():
            continue  # every edge of v already broken: moving it would change no edge
        step = len(seq)
        length = distance + (step - 1) * growth
        units = unit_vectors(np.where(edges[own, 0:1] == v, 1.0, -1.0) * (seg[own, 1] - seg[own, 0]))
        outward = -unit_vectors(units.sum(axis=0)) if len(units) else np.zeros(3)
        draws = unit_vectors(rng.standard_normal((tries, 3)))
        dirs = unit_vectors(outward[None, :] + 0.5 * draws) if np.linalg.norm(outward) > 1e-9 else draws
        point = gt.vertices[v] + length * dirs  # (tries, 3)
        ok = (units @ dirs.T <= 1e-9).all(axis=0) if len(units) else np.ones(tries, bool)
        if (~own).any():
            rest = seg[~own]
            near = point_segment_distance(point[:, None, :], rest[None, :, 0], rest[None, :, 1]).min(axis=1)
            ok &= near >= length * (1 - 1e-9)
        if not ok.any():
            continue
        verts = verts.copy()
        verts[v] = point[int(np.argmax(ok))]
        moved[v] = True
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
    """Delete one more distinct vertex (and its edges) per step.

    A vertex whose edges all lead to vertices deleted before is skipped (deleting it would remove no edge,
    invisible to every edge metric), so each step removes at least one more GT edge; a wireframe can give
    fewer than ``steps`` steps. A wireframe without edges deletes vertices in random order.
    """
    edges = clean_edges(gt)
    deleted = np.zeros(gt.n_vertices, dtype=bool)
    picks: list[int] = []
    for v in rng.permutation(_vertex_candidates(gt)):
        if len(picks) == steps:
            break
        own = (edges[:, 0] == v) | (edges[:, 1] == v)
        others = np.where(edges[own, 0] == v, edges[own, 1], edges[own, 0])
        if len(edges) and not (~deleted[others]).any():
            continue
        deleted[v] = True
        picks.append(int(v))
    return [gt] + [remove_vertices(gt, np.array(picks[: k + 1])) for k in range(len(picks))]


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
