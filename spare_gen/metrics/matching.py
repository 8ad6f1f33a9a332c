"""One-to-one matching within a distance threshold, and precision/recall/F1 from the match count.

The threshold makes the matching sparse: only pairs closer than the threshold can match. We split the
candidate graph into connected components and run the Hungarian method
(``scipy.optimize.linear_sum_assignment``) on each component, which gives exactly the result of one big
Hungarian run with out-of-threshold pairs forbidden, at a fraction of the cost on large wireframes.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree


def match_candidates(
    rows: np.ndarray, cols: np.ndarray, costs: np.ndarray, n_rows: int, n_cols: int
) -> tuple[np.ndarray, np.ndarray]:
    """Largest one-to-one matching that uses only the candidate pairs, cheapest among the largest.

    ``rows[k]``, ``cols[k]``, ``costs[k]`` (>= 0) describe candidate pair k. Returns matched (rows, cols).
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    costs = np.asarray(costs, dtype=np.float64)
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    graph = coo_matrix((np.ones(len(rows)), (rows, n_rows + cols)), shape=(n_rows + n_cols,) * 2)
    _, labels = connected_components(graph, directed=False)
    comp = labels[rows]
    pairs_per_comp = np.bincount(comp)
    single = pairs_per_comp[comp] == 1  # a lone candidate pair is its own component: it simply matches
    out_r, out_c = [rows[single]], [cols[single]]
    multi = np.nonzero(~single)[0]
    multi = multi[np.argsort(comp[multi], kind="stable")]
    bounds = np.nonzero(np.diff(comp[multi]))[0] + 1
    for group in np.split(multi, bounds) if len(multi) else []:
        r_ids, r_loc = np.unique(rows[group], return_inverse=True)
        c_ids, c_loc = np.unique(cols[group], return_inverse=True)
        k = min(len(r_ids), len(c_ids))
        c = costs[group]
        forbidden = (k + 1) * (float(c.max()) + 1.0)  # dearer than any all-candidate matching: maximises size
        dense = np.full((len(r_ids), len(c_ids)), forbidden)
        dense[r_loc, c_loc] = c
        ri, ci = linear_sum_assignment(dense)
        ok = dense[ri, ci] < forbidden
        out_r.append(r_ids[ri[ok]])
        out_c.append(c_ids[ci[ok]])
    return np.concatenate(out_r), np.concatenate(out_c)


def match_points(pred: np.ndarray, gt: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one matching of points closer than ``threshold`` (largest, then nearest); returns (pred, gt) rows."""
    if len(pred) == 0 or len(gt) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    pairs = cKDTree(pred).sparse_distance_matrix(cKDTree(gt), threshold, output_type="ndarray")
    return match_candidates(pairs["i"], pairs["j"], pairs["v"], len(pred), len(gt))


def prf(n_matched: int, n_pred: int, n_gt: int) -> dict[str, float]:
    """Precision, recall and F1 from a match count.

    Both sides empty is a perfect answer (1, 1, 1); one side empty scores (0, 0, 0): an empty prediction
    earns nothing, and predictions against an empty ground truth are all false.
    """
    if n_pred == 0 and n_gt == 0:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    if n_pred == 0 or n_gt == 0:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    precision = n_matched / n_pred
    recall = n_matched / n_gt
    f1 = 2.0 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}
