"""Wireframe corruptions: well-formed output, determinism, what each kind keeps, and severity ordering."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from spare_gen.metrics.catalog import corner_prf, edge_prf
from spare_gen.rng import derive_rng
from spare_gen.rating.corruptions import (
    NEW_VERTEX,
    SEVERITIES,
    SEVERITY_TABLE,
    CorruptionKind,
    Severity,
    corrupt,
    corrupt_with_source,
    get_corruption_names,
    SHIFT_SPREAD,
    model_size,
)
from spare_gen.wireframe import CORNER, CURVE, Wireframe

NAMES = ("deform", "perturb", "add", "remove")
seeds = st.integers(0, 2**32 - 1)


# ---------------------------------------------------------------- test wireframes


def random_wireframe(seed: int) -> Wireframe:
    """2-24 vertices at a random scale, a random non-empty, non-complete edge set, random kinds."""
    rng = derive_rng(seed, "random-wireframe")
    n = int(rng.integers(2, 25))
    vertices = rng.uniform(-1, 1, size=(n, 3)) * 10 ** rng.uniform(-3, 3)
    i, j = np.triu_indices(n, k=1)
    keep = rng.random(len(i)) < rng.uniform(0.05, 0.6)
    keep[rng.integers(len(i))] = True
    if keep.all() and len(keep) > 1:
        keep[rng.integers(len(i))] = False
    edges = np.stack([i[keep], j[keep]], axis=1)
    if n == 2:  # one pair only: a single-vertex-pair graph is complete once it has its edge
        vertices = np.concatenate([vertices, vertices[:1] + 1.0])
    flip = rng.random(len(edges)) < 0.5
    edges[flip] = edges[flip, ::-1]
    return Wireframe(vertices, edges, rng.integers(0, 2, size=len(vertices)))


def cube(side: float = 1.0) -> Wireframe:
    v = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float) * side
    e = [(a, b) for a in range(8) for b in range(a + 1, 8) if np.abs(v[a] - v[b]).sum() == side]
    return Wireframe(v, e)


def prism(profile: np.ndarray, height: float, kinds=None) -> Wireframe:
    """A closed planar polygon extruded along z: two rings plus vertical edges (all, or only at corners)."""
    n = len(profile)
    v = np.concatenate([np.c_[profile, np.zeros(n)], np.c_[profile, np.full(n, height)]])
    ring = [(k, (k + 1) % n) for k in range(n)]
    kinds = np.zeros(n, dtype=np.uint8) if kinds is None else np.asarray(kinds, dtype=np.uint8)
    verticals = [(k, n + k) for k in range(n) if kinds[k] == CORNER]
    e = ring + [(a + n, b + n) for a, b in ring] + verticals
    return Wireframe(v, e, np.concatenate([kinds, kinds]))


def l_block() -> Wireframe:
    return prism(np.array([[0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3]], dtype=float), 1.0)


def ring(segments: int = 24) -> Wireframe:
    """A cylinder's wireframe: two discretised circles (CURVE points) joined by one seam edge."""
    t = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    kinds = np.full(segments, CURVE)
    kinds[0] = CORNER
    return prism(np.c_[np.cos(t), np.sin(t)], 1.5, kinds)


def grid(rng: np.random.Generator) -> Wireframe:
    """An nx x ny x nz lattice with random spacings (at least 4 vertices)."""
    shape = rng.integers(1, 5, size=3)
    shape[:2] = np.maximum(shape[:2], 2)
    return lattice([np.cumsum(np.r_[0, rng.uniform(0.5, 2.0, size=s - 1)]) for s in shape])


def lattice(axes: list[np.ndarray]) -> Wireframe:
    """Grid points at the given x, y, z coordinates, joined to their axis neighbours."""
    shape = [len(a) for a in axes]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    index = np.arange(len(points)).reshape(shape)
    edges = []
    for axis in range(3):
        a = np.moveaxis(index, axis, 0)
        edges.append(np.stack([a[:-1].ravel(), a[1:].ravel()], axis=1))
    return Wireframe(points, np.concatenate(edges))


def boxes(rng: np.random.Generator) -> Wireframe:
    """1-3 rotated boxes of random size at random places (a box-like multi-part model)."""
    parts, edges, offset = [], [], 0
    for _ in range(int(rng.integers(1, 4))):
        box = cube()
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        parts.append((box.vertices * rng.uniform(0.3, 3.0, size=3)) @ q.T + rng.uniform(-3, 3, size=3))
        edges.append(box.edges + offset)
        offset += 8
    return Wireframe(np.concatenate(parts), np.concatenate(edges))


def normalised(wf: Wireframe) -> Wireframe:
    """Scaled to bounding-box diagonal 1, the units the metric thresholds expect."""
    v = wf.vertices - wf.vertices.min(axis=0)
    return Wireframe(v / np.linalg.norm(np.ptp(v, axis=0)), wf.edges, wf.kinds)


def metric_test_set() -> list[Wireframe]:
    generated = [(grid if k % 2 else boxes)(derive_rng(2025, "metric-set", k)) for k in range(40)]
    return [normalised(w) for w in generated + [cube(), l_block(), ring()]]


# ---------------------------------------------------------------- helpers


def undirected(edges: np.ndarray) -> list[tuple[int, int]]:
    return [tuple(e) for e in np.sort(edges, axis=1).tolist()]


def components(n: int, edges: np.ndarray) -> np.ndarray:
    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def expected_count(kind: str, severity: str, n: int, upper: int) -> int:
    return min(upper, max(1, round(SEVERITY_TABLE[kind][severity].fraction * n)))


def assert_well_formed(out: Wireframe) -> None:
    out.validate()
    assert out.vertices.dtype == np.float64 and out.edges.dtype == np.int64 and out.kinds.dtype == np.uint8
    assert np.isfinite(out.vertices).all()
    assert len(out.kinds) == out.n_vertices and set(out.kinds.tolist()) <= {CORNER, CURVE}
    assert ((out.edges >= 0) & (out.edges < out.n_vertices)).all()
    assert (out.edges[:, 0] != out.edges[:, 1]).all(), "self-loop"
    assert len(set(undirected(out.edges))) == out.n_edges, "duplicate undirected edge"


# ---------------------------------------------------------------- properties over random wireframes


@settings(max_examples=120, deadline=None)
@given(seed=seeds, name=st.sampled_from(NAMES), severity=st.sampled_from(SEVERITIES))
def test_output_is_well_formed_and_deterministic(seed, name, severity):
    gt = random_wireframe(seed)
    result = corrupt_with_source(gt, name, severity, derive_rng(seed, "corrupt"))
    assert_well_formed(result.wireframe)
    again = corrupt(gt, name, severity, derive_rng(seed, "corrupt"))
    np.testing.assert_array_equal(again.vertices, result.wireframe.vertices)
    np.testing.assert_array_equal(again.edges, result.wireframe.edges)
    np.testing.assert_array_equal(again.kinds, result.wireframe.kinds)
    source = result.source_vertex
    assert len(source) == result.wireframe.n_vertices and ((source >= NEW_VERTEX) & (source < gt.n_vertices)).all()
    from_gt = source >= 0
    np.testing.assert_array_equal(result.wireframe.kinds[from_gt], gt.kinds[source[from_gt]])


@settings(max_examples=40, deadline=None)
@given(seed=seeds, severity=st.sampled_from(SEVERITIES))
def test_add_keeps_every_gt_edge_and_adds_only_new_pairs(seed, severity):
    gt = random_wireframe(seed)
    result = corrupt_with_source(gt, "add", severity, derive_rng(seed, "add"))
    out = result.wireframe
    np.testing.assert_array_equal(out.vertices, gt.vertices)
    np.testing.assert_array_equal(out.edges[: gt.n_edges], gt.edges)
    added = undirected(out.edges[gt.n_edges :])
    assert not set(added) & set(undirected(gt.edges))
    n = gt.n_vertices
    assert len(added) == expected_count("add", severity, gt.n_edges, n * (n - 1) // 2 - gt.n_edges)
    assert edge_prf(out, gt)["recall"] == 1.0


@settings(max_examples=40, deadline=None)
@given(seed=seeds, severity=st.sampled_from(SEVERITIES))
def test_remove_keeps_a_subset_of_gt_vertices_and_edges(seed, severity):
    gt = random_wireframe(seed)
    result = corrupt_with_source(gt, "remove", severity, derive_rng(seed, "remove"))
    out, kept = result.wireframe, result.source_vertex
    assert out.n_vertices == gt.n_vertices - expected_count("remove", severity, gt.n_vertices, gt.n_vertices - 1)
    assert (np.diff(kept) > 0).all()  # remaining vertices keep their order
    np.testing.assert_array_equal(out.vertices, gt.vertices[kept])
    back = undirected(kept[out.edges])  # edges in GT numbering (before renumbering)
    survivors = [e for e in undirected(gt.edges) if set(e) <= set(kept.tolist())]
    assert sorted(back) == sorted(survivors)  # exactly the GT edges between kept vertices
    assert corner_prf(out, gt, kinds="all")["precision"] == 1.0


@settings(max_examples=40, deadline=None)
@given(seed=seeds, severity=st.sampled_from(SEVERITIES))
def test_deform_keeps_connected_components(seed, severity):
    gt = random_wireframe(seed)
    out = corrupt(gt, "deform", severity, derive_rng(seed, "deform"))
    n, params = gt.n_vertices, SEVERITY_TABLE["deform"][severity]
    split = expected_count("deform", severity, gt.n_edges, gt.n_edges)
    assert out.n_vertices == n + split * (params.splits - 1)
    assert out.n_edges == gt.n_edges + split * (params.splits - 1)
    np.testing.assert_array_equal(out.vertices[:n], gt.vertices)  # original vertices do not move
    assert (out.kinds[n:] == CURVE).all()
    before, after = components(n, gt.edges), components(out.n_vertices, out.edges)
    assert after.max() == before.max()  # no new component (new points hang on old ones)
    pairs = set(zip(before.tolist(), after[:n].tolist()))
    assert len(pairs) == before.max() + 1  # the same partition of the original vertices


@settings(max_examples=40, deadline=None)
@given(seed=seeds, severity=st.sampled_from(SEVERITIES))
def test_perturb_rewires_each_edge_to_copies_of_its_ends(seed, severity):
    gt = random_wireframe(seed)
    result = corrupt_with_source(gt, "perturb", severity, derive_rng(seed, "perturb"))
    out, source = result.wireframe, result.source_vertex
    params = SEVERITY_TABLE["perturb"][severity]
    moved = expected_count("perturb", severity, gt.n_vertices, gt.n_vertices)
    assert out.n_vertices == gt.n_vertices + moved * (params.splits - 1)
    np.testing.assert_array_equal(source[out.edges], gt.edges)  # same edges, ends replaced by copies
    assert (source[: gt.n_vertices] == np.arange(gt.n_vertices)).all()
    assert np.bincount(source, minlength=gt.n_vertices).max() == params.splits


# ---------------------------------------------------------------- hand-computed cases


@pytest.mark.parametrize(
    "name, severity, n_vertices, n_edges",
    [
        ("remove", "low", 7, 9),  # round(0.1 * 8) = 1 vertex of degree 3
        ("remove", "high", 5, None),  # round(0.4 * 8) = 3 vertices
        ("add", "low", 8, 13),  # round(0.1 * 12) = 1 edge
        ("add", "high", 8, 18),  # round(0.5 * 12) = 6 edges
        ("deform", "low", 10, 14),  # round(0.15 * 12) = 2 edges, each into 2 pieces
        ("deform", "high", 32, 36),  # round(0.7 * 12) = 8 edges, each into 4 pieces
        ("perturb", "low", 9, 12),  # round(0.1 * 8) = 1 vertex into 2 copies
        ("perturb", "high", 16, 12),  # 4 vertices into 3 copies each
    ],
)
def test_counts_on_a_cube(name, severity, n_vertices, n_edges):
    out = corrupt(cube(), name, severity, derive_rng(1, "cube"))
    assert out.n_vertices == n_vertices
    if n_edges is not None:
        assert out.n_edges == n_edges


def test_perturb_gives_every_copy_an_edge_when_the_degree_allows():
    gt = cube()  # degree 3 everywhere, high severity makes 3 copies: each copy gets exactly one edge
    result = corrupt_with_source(gt, "perturb", "high", derive_rng(5, "copies"))
    degree = np.bincount(result.wireframe.edges.ravel(), minlength=result.wireframe.n_vertices)
    split = np.bincount(result.source_vertex) == 3
    assert (degree[split[result.source_vertex]] == 1).all()
    assert (degree[~split[result.source_vertex]] == 3).all()


def test_noise_scales_with_the_model():
    small, large = cube(0.01), cube(100.0)
    a = corrupt(small, "perturb", "high", derive_rng(9, "scale"))
    b = corrupt(large, "perturb", "high", derive_rng(9, "scale"))
    np.testing.assert_allclose(a.vertices * 1e4, b.vertices, rtol=1e-9, atol=1e-9)
    assert np.abs(a.vertices[:8] - small.vertices).max() > 0


def test_model_size_is_the_bounding_box_diagonal():
    assert model_size(cube(2.0)) == pytest.approx(2.0 * np.sqrt(3))
    assert model_size(Wireframe([[0, 0, 0], [3, 4, 0]], np.zeros((0, 2)))) == 5.0
    assert model_size(Wireframe([[1, 1, 1]], np.zeros((0, 2)))) == 1.0


@pytest.mark.parametrize("name", ("deform", "perturb"))
@pytest.mark.parametrize("severity", SEVERITIES)
def test_moved_points_move_by_the_table_shift_in_model_diagonals(name, severity):
    gt = cube(10.0)  # diagonal 10 * sqrt(3)
    result = corrupt_with_source(gt, name, severity, derive_rng(3, "shift", name, severity))
    out, source = result.wireframe, result.source_vertex
    shift = SEVERITY_TABLE[CorruptionKind(name)][Severity(severity)].shift * model_size(gt)
    if name == "perturb":
        moved = np.linalg.norm(out.vertices - gt.vertices[source], axis=1)
        moved = moved[moved > 0]
    else:  # split points: distance from the straight edge they were made on
        new = np.flatnonzero(source == NEW_VERTEX)
        a, b = gt.vertices[gt.edges[:, 0]], gt.vertices[gt.edges[:, 1]]
        moved = np.array([(np.linalg.norm(np.cross(b - a, out.vertices[k] - a), axis=1)
                           / np.linalg.norm(b - a, axis=1)).min() for k in new])  # fmt: skip
        assert len(moved)
    assert len(moved) and moved.max() <= SHIFT_SPREAD * shift + 1e-9
    if name == "perturb":
        assert moved.min() >= shift - 1e-9


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("severity", SEVERITIES)
def test_different_seeds_give_different_results(name, severity):
    gt = lattice([np.arange(4.0)] * 3)  # 64 vertices, 144 edges
    a = corrupt(gt, name, severity, derive_rng(1, "seed"))
    b = corrupt(gt, name, severity, derive_rng(2, "seed"))
    assert a.vertices.shape != b.vertices.shape or a.edges.shape != b.edges.shape or not (
        np.array_equal(a.vertices, b.vertices) and np.array_equal(a.edges, b.edges)
    )


def test_add_samples_without_enumerating_on_large_sparse_graphs():
    n = 1500  # 1,124,250 vertex pairs: above ENUMERATE_PAIRS_LIMIT
    path = Wireframe(np.c_[np.arange(n), np.zeros(n), np.zeros(n)], np.c_[np.arange(n - 1), np.arange(1, n)])
    out = corrupt(path, "add", "high", derive_rng(0, "sparse"))
    assert_well_formed(out)
    assert out.n_edges == (n - 1) + round(0.5 * (n - 1))
    assert not set(undirected(out.edges[n - 1 :])) & set(undirected(path.edges))


def test_names_severities_and_enums():
    assert get_corruption_names() == ["deform", "perturb", "add", "remove"]
    assert SEVERITIES == ("low", "medium", "high")
    a = corrupt(cube(), CorruptionKind.ADD, Severity.LOW, derive_rng(0, "enum"))
    b = corrupt(cube(), "add", "low", derive_rng(0, "enum"))
    np.testing.assert_array_equal(a.edges, b.edges)


@pytest.mark.parametrize(
    "wireframe, name, severity, message",
    [
        (cube(), "blur", "low", "unknown corruption 'blur'; choose from deform, perturb, add, remove"),
        (cube(), "add", "extreme", "unknown severity 'extreme'; choose from low, medium, high"),
        (Wireframe(np.zeros((0, 3)), np.zeros((0, 2))), "perturb", "low", "wireframe is empty"),
        (Wireframe([[0, 0, 0], [1, 0, 0]], [[0, 2]]), "add", "low", "edges point to missing vertices"),
        (Wireframe([[0, 0, 0], [np.nan, 0, 0]], [[0, 1]]), "remove", "low", "NaN or infinite coordinates"),
        (Wireframe([[0, 0, 0], [1, 0, 0]], np.zeros((0, 2))), "deform", "low", "no edge between two distinct"),
        (Wireframe(np.eye(3), [[0, 1], [1, 2], [2, 0]]), "add", "low", "all 3 vertex pairs"),
        (Wireframe([[0, 0, 0]], np.zeros((0, 2))), "remove", "high", "single vertex"),
        (Wireframe([[0, 0, 0], [1e308, 1e308, 0]], [[0, 1]]), "perturb", "low", "scale is not finite"),
    ],
)
def test_invalid_input_raises_naming_the_problem(wireframe, name, severity, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        corrupt(wireframe, name, severity, derive_rng(0, "bad"))


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        corrupt(cube(), "add", "low", 42)


# ---------------------------------------------------------------- severity ordering on the attacked metric

ATTACKED_METRIC = {
    "remove": lambda out, gt: corner_prf(out, gt, kinds="all")["f1"],
    "perturb": lambda out, gt: corner_prf(out, gt, kinds="all")["f1"],
    "deform": lambda out, gt: edge_prf(out, gt)["f1"],
    "add": lambda out, gt: edge_prf(out, gt)["precision"],
}


@pytest.fixture(scope="module")
def attacked_scores() -> dict[str, np.ndarray]:
    """scores[kind][model, severity] of the attacked metric over the 43 test wireframes."""
    models = metric_test_set()
    return {
        kind: np.array(
            [
                [metric(corrupt(gt, kind, s, derive_rng(7, "ordering", kind, m, s)), gt) for s in SEVERITIES]
                for m, gt in enumerate(models)
            ]
        )
        for kind, metric in ATTACKED_METRIC.items()
    }


@pytest.mark.parametrize("kind", NAMES)
def test_high_severity_scores_lower_than_low(kind, attacked_scores):
    scores = attacked_scores[kind]
    assert len(scores) == 43
    assert (scores[:, 2] < scores[:, 0]).mean() >= 0.95
    low, medium, high = scores.mean(axis=0)
    assert 1.0 > low > medium > high  # low already hurts; the mean falls with severity
