"""Length-weighted spectral graph distance (ICCV 2025 metrics paper, Sec. 3 and Supp. 8).

SD(G1, G2) = W2(spectrum(L1), spectrum(L2)) (the paper's "L2" column; "L1" is the same with W1) with
L = D - A, A_ij = |V_i - V_j| for each edge (i, j) and D the diagonal of summed incident edge lengths.
``spectral_l1_padded`` is the L1 distance of the zero-padded sorted spectra, the reading of the paper's
"L1" under which its delete-vertices rate (0.90) is reproduced (W1 re-weights the eigenvalues instead).
``spectral_l1_relative`` divides that L1 by the sum of the GT's eigenvalues (twice its total edge length): a relative
error, divided by a size of the GT as the WEDs are, the reading under which the paper's L1 also fails 0-mean
symmetry with its WEDs (0.44 each).
``spectral_normalised`` is W2 between the spectra of the normalised Laplacian I - D^-1/2 A D^-1/2 (same
weights; eigenvalues in [0, 2], blind to scale): the reading of the paper's "L2" under which its monotonic
rows are reproduced (house pool: 5 of its 6 verdicts, against 2 of 6 for the text's D - A).
``spectral_normalised_squared`` is its square, W2^2, what an optimal-transport solver's cost with a squared ground
distance returns (e.g. POT's ``emd2``): not a metric, as the paper's L2 breaks the triangle inequality (0.69).
Every vertex contributes an eigenvalue (isolated vertices give 0); an empty wireframe has the spectrum {0}.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.linalg import eigvalsh
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, laplacian
from scipy.stats import wasserstein_distance

from spare_gen.metrics.sampling import clean_edges
from spare_gen.wireframe import Wireframe


def laplacian_spectrum(wf: Wireframe, normed: bool = False) -> np.ndarray:
    """Sorted eigenvalues of the edge-length-weighted Laplacian (one per vertex); ``normed``: of the normalised
    Laplacian I - D^-1/2 A D^-1/2 (isolated vertices still give 0).

    The Laplacian is block diagonal over connected components, so each component is solved on its own
    (values only); a large connected wireframe still costs one dense symmetric eigenvalue problem.
    """
    n = wf.n_vertices
    if n == 0:
        return np.zeros(1)
    edges = clean_edges(wf)
    if len(edges) == 0:
        return np.zeros(n)
    w = np.linalg.norm(wf.vertices[edges[:, 1]] - wf.vertices[edges[:, 0]], axis=1)
    adj = coo_matrix((np.r_[w, w], (np.r_[edges[:, 0], edges[:, 1]], np.r_[edges[:, 1], edges[:, 0]])), (n, n))
    lap = laplacian(adj.tocsr(), normed=normed).tocsr()
    n_comp, labels = connected_components(adj, directed=False)
    sizes = np.bincount(labels, minlength=n_comp)
    values = [np.zeros(int((sizes == 1).sum()))]  # isolated vertices
    for comp in np.nonzero(sizes > 1)[0]:
        idx = np.nonzero(labels == comp)[0]
        block = lap[idx][:, idx].toarray()
        values.append(eigvalsh(block, overwrite_a=True, check_finite=False))
    return np.sort(np.concatenate(values))


def wasserstein2_1d(u: np.ndarray, v: np.ndarray) -> float:
    """Exact 2-Wasserstein distance between two 1-D empirical distributions (equal weights per value).

    ``scipy.stats.wasserstein_distance`` is W1 only. W2^2 is the integral over q in (0, 1) of the squared
    difference of the two quantile functions; both are step functions (steps at k/n and k/m), so the
    integral is an exact sum over the merged steps, which also handles different sample sizes.
    """
    u, v = np.sort(np.asarray(u, dtype=np.float64)), np.sort(np.asarray(v, dtype=np.float64))
    if len(u) == 0 or len(v) == 0:
        raise ValueError(f"W2 needs two non-empty samples, got sizes {len(u)} and {len(v)}")
    n, m = len(u), len(v)
    steps = np.union1d(np.arange(1, n + 1) / n, np.arange(1, m + 1) / m)
    steps[-1] = 1.0
    lo = np.r_[0.0, steps[:-1]]
    mid = 0.5 * (lo + steps)
    diff = u[np.minimum((mid * n).astype(np.int64), n - 1)] - v[np.minimum((mid * m).astype(np.int64), m - 1)]
    return float(np.sqrt(np.sum((steps - lo) * diff * diff)))


def spectral_distance(pred: Wireframe, gt: Wireframe) -> float:
    """W2 distance between the length-weighted Laplacian spectra (symmetric; units of length)."""
    return wasserstein2_1d(laplacian_spectrum(pred), laplacian_spectrum(gt))


def spectral_distance_l1(pred: Wireframe, gt: Wireframe) -> float:
    """W1 distance between the length-weighted Laplacian spectra: Table 2's "Spectral L1" column.

    The mean absolute difference of the two quantile functions (symmetric; units of length); empty
    wireframes have the spectrum {0} as in :func:`spectral_distance`.
    """
    return float(wasserstein_distance(laplacian_spectrum(pred), laplacian_spectrum(gt)))


@lru_cache(maxsize=32)
def _cached_spectrum(vertices: bytes, edges: bytes, n_vertices: int, normed: bool) -> np.ndarray:
    wf = Wireframe(np.frombuffer(vertices).reshape(n_vertices, 3), np.frombuffer(edges, dtype=np.int64).reshape(-1, 2))
    return laplacian_spectrum(wf, normed)


def _spectrum(wf: Wireframe, normed: bool = False) -> np.ndarray:
    """The spectrum, cached on the geometry: a report compares many predictions with the same GT."""
    vertices = np.ascontiguousarray(wf.vertices, dtype=np.float64)
    edges = np.ascontiguousarray(wf.edges, dtype=np.int64)
    return _cached_spectrum(vertices.tobytes(), edges.tobytes(), len(vertices), normed)


def padded_l1(u: np.ndarray, v: np.ndarray) -> float:
    """L1 distance of the two sorted spectra after padding the shorter with zeros (eigenvalues of isolated
    vertices): every eigenvalue counts in full, so a vertex fewer is a difference, not a re-weighting."""
    n = max(len(u), len(v))
    a = np.sort(np.r_[np.asarray(u, dtype=np.float64), np.zeros(n - len(u))])
    b = np.sort(np.r_[np.asarray(v, dtype=np.float64), np.zeros(n - len(v))])
    return float(np.abs(a - b).sum())


def spectral_distances(pred: Wireframe, gt: Wireframe) -> dict[str, float]:
    """W2 (:func:`spectral_distance`), W1 (:func:`spectral_distance_l1`) and the zero-padded L1
    (:func:`padded_l1`) from one pair of spectra, that L1 divided by the sum of the GT's eigenvalues (its Laplacian's
    trace, twice its edge length; not divided when the GT has no edge), and W2 between the normalised Laplacians'
    spectra and its square."""
    a, b = _spectrum(pred), _spectrum(gt)
    l1, gt_sum = padded_l1(a, b), float(b.sum())
    w2_normed = wasserstein2_1d(_spectrum(pred, True), _spectrum(gt, True))
    return {"w2": wasserstein2_1d(a, b), "w1": float(wasserstein_distance(a, b)), "l1_padded": l1,
            "l1_relative": l1 / gt_sum if gt_sum > 0 else l1,
            "w2_normed": w2_normed, "w2_normed_squared": w2_normed**2}
