"""The corrupted-wireframe pool: end to end on CSG models, determinism, failures, and severity ordering."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from spare_gen.stages.pool.driver import run_pool
from spare_gen.jobs.regenerate import POOL_STAGES, run
from spare_gen import cad
from spare_gen.atomic import write_parquet
from spare_gen.config import load_config
from spare_gen.metrics.catalog import corner_prf, edge_prf
from spare_gen.stages.models.csg import random_program
from spare_gen.stages.models.schema import MODELS_SCHEMA
from spare_gen.store.shards import rows_to_table
from spare_gen.stages.models.child import check_csg
from spare_gen.rng import derive_rng, derive_seed
from spare_gen.runner.cluster import open_client
from spare_gen.stages.pool.schema import METRIC_COLUMNS
from spare_gen.stages.pool.settings import CorruptionSettings
from spare_gen.rating.corruptions import SEVERITIES, get_corruption_names
from spare_gen.stages.pool.child import brep_wireframe
from spare_gen.stages.pool.schema import CORRUPTIONS_SCHEMA, METRIC_COLUMNS, PICTURE_COLUMNS, WIREFRAMES_SCHEMA
from spare_gen.stages.pool.corruptions import corruption_id, make_corruptions

N_MODELS = 3
N_VARIANTS = len(get_corruption_names()) * len(SEVERITIES)


def pool_config(out: Path, *overrides: str):
    return load_config(None, [
        f'out="{out}"', "runner.workers=1", "runner.progress=false", "runner.dashboard=false",
        f"models.csg.count={N_MODELS}", f"pool.models={N_MODELS}", "pool.image_size=128", *overrides,
    ])  # fmt: skip


@pytest.fixture(scope="module")
def run_a(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pool") / "a"
    run(pool_config(out), stages=POOL_STAGES)  # what `spare-gen pool` runs
    return out


@pytest.fixture(scope="module")
def client():
    with open_client(workers=1, dashboard=False, quiet=True) as c:
        yield c


def copy_models(src: Path, dst: Path) -> None:
    """The models (and their finished-unit files) of ``src``, so a pool run in ``dst`` sees the same GTs."""
    shutil.copytree(src / "models", dst / "models")
    shutil.copytree(src / ".units" / "models", dst / ".units" / "models")
    shutil.copytree(src / "models.parquet", dst / "models.parquet")  # a folder of parts


def test_pool_files_rows_and_pictures(run_a):
    out = run_a
    wf = pq.read_table(out / "wireframes.parquet")
    assert wf.schema.equals(WIREFRAMES_SCHEMA)
    assert wf.column("status").to_pylist() == ["ok"] * N_MODELS
    for row in wf.to_pylist():
        v = np.asarray(row["vertices"])
        assert np.linalg.norm(v.max(0) - v.min(0)) == pytest.approx(1.0)
        assert row["n_corners"] == row["vertex_kinds"].count(0) > 0

    cor = pq.read_table(out / "corruptions.parquet")
    assert cor.schema.equals(CORRUPTIONS_SCHEMA)
    rows = cor.to_pylist()
    keys = [(r["model_id"], r["kind"], r["severity"]) for r in rows]
    expected = [(m, k, s) for m in sorted(wf.column("model_id").to_pylist())
                for k in get_corruption_names() for s in SEVERITIES]  # fmt: skip
    assert keys == expected  # one row per (model, kind, severity), in a fixed order
    for r in rows:
        assert r["status"] == "ok" and r["corruption_id"] == corruption_id(0, r["model_id"], r["kind"], r["severity"])
        assert r["seed"] == derive_seed(0, "corruption", r["model_id"], r["kind"], r["severity"])
        assert all(r[m] is not None and np.isfinite(r[m]) for m in METRIC_COLUMNS)
        for column in PICTURE_COLUMNS:
            assert (out / r[column]).is_file(), column
        assert r["overlay_png"] == f"pool/{r['model_id']}/{r['corruption_id']}_overlay.png"
        assert (out / r["overlay_png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert 'width="256"' in (out / r["overlay_svg"]).read_text()  # two 128 px views side by side

    pairs = pd.read_parquet(out / "pairs.parquet")
    per_model = N_VARIANTS * (N_VARIANTS - 1) // 2  # every pair of one model's variants
    repeats = round(0.05 * per_model)
    assert len(pairs) == N_MODELS * (per_model + repeats)
    assert (pairs["pair_type"] == "sanity").sum() == N_MODELS * len(get_corruption_names())
    csv = pd.read_csv(out / "pool" / "annotation_pairs.csv")
    assert list(csv.columns) == ["pair_id", "left_image", "right_image"] and len(csv) == len(pairs)
    assert all((out / p).is_file() for p in csv["left_image"])
    readme = (out / "pool" / "README.md").read_text()
    assert "pair_id,rater_id,choice" in readme and "spare-gen rank" in readme
    assert (out / "preview" / "corruptions.png").read_bytes()[:4] == b"\x89PNG"
    sheet = (out / "preview" / "corruptions.svg").read_text()  # its vector twin: the overlays' own SVGs nested
    shown = re.search(r"(csg_\d+): variants", sheet).group(1)
    overlays = [(out / r["overlay_svg"]).read_text() for r in rows if r["model_id"] == shown]
    assert len(overlays) == N_VARIANTS and "<image" not in sheet
    assert all(p in sheet for o in overlays for p in re.findall(r'<path d="[^"]+"/>', o))
    manifest = json.loads((out / "dataset.json").read_text())
    assert manifest["complete"] and set(manifest["stages"]) == {"models", "pool"}


def test_same_seed_same_bytes_and_other_seed_other_variants(run_a, client, tmp_path):
    same, other = tmp_path / "same", tmp_path / "other"
    for out in (same, other):
        copy_models(run_a, out)
    run_pool(client, pool_config(same), same)
    run_pool(client, pool_config(other, "seed=1"), other)  # same models (resumed), other corruption seed

    for name in ("corruptions.parquet", "pairs.parquet", "pool/annotation_pairs.csv", "preview/corruptions.png",
                 "preview/corruptions.svg"):
        assert (same / name).read_bytes() == (run_a / name).read_bytes(), name
    a_pictures = sorted(p.relative_to(run_a) for p in (run_a / "pool").rglob("*.png"))
    assert a_pictures == sorted(p.relative_to(same) for p in (same / "pool").rglob("*.png"))
    assert all((run_a / p).read_bytes() == (same / p).read_bytes() for p in a_pictures)

    wf_a = pq.read_table(run_a / "wireframes.parquet")
    assert wf_a.equals(pq.read_table(other / "wireframes.parquet"))  # same GTs
    a = pq.read_table(run_a / "corruptions.parquet").to_pylist()
    b = pq.read_table(other / "corruptions.parquet").to_pylist()
    names = lambda rows: [(r["model_id"], r["kind"], r["severity"]) for r in rows]  # noqa: E731
    assert names(a) == names(b)
    assert all(ra["corruption_id"] != rb["corruption_id"] for ra, rb in zip(a, b))  # ids are drawn from the seed
    differ = [ra["vertices"] != rb["vertices"] or ra["edges"] != rb["edges"] for ra, rb in zip(a, b)]
    assert all(differ) and all(ra["seed"] != rb["seed"] for ra, rb in zip(a, b))


def test_unusable_and_crashing_models_are_rows_not_failures(client, tmp_path):
    """A sphere has no feature edge and a crashing child is contained: both become wireframe rows; the box
    alone gets variants."""
    out = tmp_path / "out"
    shapes = {
        "a_box": {"type": "box", "params": {"dx": 1, "dy": 1, "dz": 1}},
        "b_sphere": {"type": "sphere", "params": {"r": 0.5}},
        "c_crash": {"type": "box", "params": {"dx": 1, "dy": 2, "dz": 1}},
    }
    rows = []
    for model_id, spec in shapes.items():
        cad.write_brep(cad.build_csg({"primitives": [spec], "operations": []}), out / "models" / f"{model_id}.brep")
        rows.append({"model_id": model_id, "status": "ok", "brep_path": f"models/{model_id}.brep"})
    write_parquet(out / "models.parquet", rows_to_table(rows, MODELS_SCHEMA))
    run_pool(client, pool_config(out, 'debug.crash=["wireframes:c_crash"]'), out)

    wf = {r["model_id"]: r for r in pq.read_table(out / "wireframes.parquet").to_pylist()}
    assert (wf["a_box"]["status"], wf["a_box"]["n_vertices"], wf["a_box"]["n_edges"]) == ("ok", 8, 12)
    assert wf["b_sphere"]["status"] == "failed" and "no feature edges" in wf["b_sphere"]["error"]
    assert wf["c_crash"]["status"] == "crashed" and wf["c_crash"]["vertices"] is None
    cor = pq.read_table(out / "corruptions.parquet")
    assert set(cor.column("model_id").to_pylist()) == {"a_box"} and cor.num_rows == N_VARIANTS


# ------------------------------------------------------------------------ severity ordering (library level)

SHARED_FILES = ("bug3883_xr2-ct-214_l-bracket.stp", "io1-ug-214.stp", "nist_ctc_01.brep", "ANC101.stp",
                "bm2_ec_lever-A.stp", "sheet_metal_54.brep")  # fmt: skip


@pytest.fixture(scope="module")
def ground_truths(real_cad) -> dict:
    """16 random CSG ground truths (as the models stage makes them) and 6 real parts."""
    gts, i = {}, 0
    while len(gts) < 16:
        program = random_program(2 + i % 3, derive_rng(0, "test-pool", i))
        i += 1
        try:
            shape = cad.build_csg(program)
            if check_csg(shape, program, 0.05)[0] is None:
                gts[f"csg{i}"] = brep_wireframe(shape).wireframe
        except (cad.CsgError, ValueError):  # failed boolean, or only spheres / tori: no feature edges
            continue
    for name in SHARED_FILES:
        gts[name] = brep_wireframe(cad.read_shape(real_cad / name)).wireframe
    return gts


# The score each corruption attacks. Remove and perturb hit vertices of either kind, so their score is
# vertex F1 over all vertices; CORNER-only F1 misses the many hits on CURVE points of curve-heavy CSG models.
ATTACKED = {
    "remove": lambda p, g: corner_prf(p, g, kinds="all")["f1"],
    "perturb": lambda p, g: corner_prf(p, g, kinds="all")["f1"],
    "deform": lambda p, g: edge_prf(p, g)["f1"],
    "add": lambda p, g: edge_prf(p, g)["precision"],
}


def test_high_severity_scores_lower_than_low(ground_truths):
    assert len(ground_truths) >= 20
    lower = {kind: 0 for kind in ATTACKED}
    for model_id, gt in ground_truths.items():
        variants = {(v.kind, v.severity): v.wireframe for v in make_corruptions(gt, model_id, 0)}
        for kind, score in ATTACKED.items():
            lower[kind] += score(variants[kind, "high"], gt) < score(variants[kind, "low"], gt)
        for severity in SEVERITIES:  # adding wrong edges never loses a true corner or edge
            added = variants["add", severity]
            assert corner_prf(added, gt)["recall"] == edge_prf(added, gt)["recall"] == 1.0
    shares = {kind: n / len(ground_truths) for kind, n in lower.items()}
    assert min(shares.values()) >= 0.95, shares


def test_a_pool_alone_makes_only_the_models_it_needs_and_a_rerun_has_nothing_to_do(tmp_path):
    from spare_gen.jobs.regenerate import nothing_to_do
    from spare_gen.store.shards import read

    out = tmp_path / "pool"
    config = pool_config(out, "models.csg.count=240", "pool.models=2", "runner.shard_units=2")
    run(config, stages=POOL_STAGES)
    statuses = read(out / "models.parquet", ["status"]).column("status").to_pylist()
    assert 2 <= statuses.count("ok") and len(statuses) <= 8, statuses  # parts of 2, doubled until 2 are ok
    assert pq.read_table(out / "wireframes.parquet").num_rows == 2
    assert nothing_to_do(config, out, POOL_STAGES)


def test_a_metric_added_to_the_registry_reruns_the_variants_of_an_earlier_pool(tmp_path):
    """The score columns are part of the corruption stage's settings: a pool made before a metric was registered
    has a different fingerprint, so its variants are scored again (with the new column) instead of reused."""
    settings = CorruptionSettings.from_config(load_config(None, [f'out="{tmp_path}"']), tmp_path, {})
    assert settings.metrics == METRIC_COLUMNS
    earlier = settings.model_copy(update={"metrics": METRIC_COLUMNS[:-1]})
    assert earlier.fingerprint() != settings.fingerprint()


def test_the_corruption_sheets_labels_are_sized_to_its_cells():
    import io

    from PIL import Image

    from spare_gen.rating.pictures import contact_sheet

    def blank(width: int) -> bytes:
        buffer = io.BytesIO()
        Image.new("RGB", (width, width // 2), "white").save(buffer, format="PNG")
        return buffer.getvalue()

    def label_ink_rows(width: int) -> int:  # rows of the first cell's label strip that hold text
        sheet = contact_sheet({("deform", "low"): blank(width)}, ["deform"], ["low"], "model: variants")
        pixels = np.asarray(Image.open(io.BytesIO(sheet)).convert("L"))
        strip = pixels[:pixels.shape[0] - width // 2, : width // 2]
        return int((strip < 128).any(axis=1).sum())

    assert label_ink_rows(768) >= 2 * label_ink_rows(256) >= 2 * 12  # the pool's cells get text that reads at 768 px
