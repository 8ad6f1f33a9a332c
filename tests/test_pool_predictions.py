"""Methods' predictions in the pool (Pool 1): perfect, slightly noisy and broken files, ranked with the corruptions."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from spare_gen.cli import main
from spare_gen.ranking import simulate_judgements
from spare_gen.rng import derive_rng

N_MODELS = 3
CONFIG = """\
seed = 0
[runner]
workers = 1
progress = false
dashboard = false
[models.csg]
count = {n}
[pool]
models = {n}
image_size = 128
"""


def model_units(row: dict) -> np.ndarray:
    return np.asarray(row["vertices"]) * row["scale"] + np.asarray(row["centre"])


def write_predictions(out: Path, folder: Path) -> dict[str, Path]:
    """perfect/ (JSON with vertex kinds, model units) and noisy/ (OBJ, model units, 1% noise) for every
    model; broken/ files and a file of a model that is not in the pool."""
    rows = [r for r in pq.read_table(out / "wireframes.parquet").to_pylist() if r["status"] == "ok"]
    for name in ("perfect", "noisy", "broken"):
        (folder / name).mkdir(parents=True)
    rng = derive_rng(0, "noisy-predictions")
    for row in rows:
        vertices = model_units(row)
        body = {"vertices": vertices.tolist(), "edges": row["edges"], "vertex_kinds": row["vertex_kinds"]}
        (folder / "perfect" / f"{row['model_id']}.json").write_text(json.dumps(body))
        noisy = vertices + rng.normal(0.0, 0.01 * row["scale"], size=vertices.shape)
        lines = [f"v {x} {y} {z}" for x, y, z in noisy] + [f"l {i + 1} {j + 1}" for i, j in row["edges"]]
        (folder / "noisy" / f"{row['model_id']}.obj").write_text("\n".join(lines) + "\n")
    ids = [r["model_id"] for r in rows]
    broken = {
        "bad_json": folder / "broken" / f"{ids[0]}.json",
        "missing_vertex": folder / "broken" / f"{ids[1]}.json",
        "bad_obj": folder / "broken" / f"{ids[2]}.obj",
        "unknown_model": folder / "perfect" / "no_such_model.json",
    }
    broken["bad_json"].write_text('{"vertices": [[0, 0, 0],')
    broken["missing_vertex"].write_text(json.dumps({"vertices": [[0, 0, 0], [1, 1, 1]], "edges": [[0, 5]]}))
    broken["bad_obj"].write_text("v 0 0 0\nv 1 two 3\nl 1 2\n")
    broken["unknown_model"].write_text(json.dumps({"vertices": [[0, 0, 0]], "edges": []}))
    return broken


@pytest.fixture(scope="module")
def pool_with_predictions(tmp_path_factory):
    root = tmp_path_factory.mktemp("predictions")
    config, out = root / "pool.toml", root / "out"
    config.write_text(CONFIG.format(n=N_MODELS))
    assert main(["pool", "--config", str(config), "--out", str(out)]) == 0  # the ground truths first
    broken = write_predictions(out, root / "preds")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["pool", "--config", str(config), "--out", str(out), "--predictions", str(root / "preds")])
    assert code == 0, err.getvalue()
    return out, broken, err.getvalue()


def test_predictions_become_scored_pictured_candidates(pool_with_predictions):
    out, broken, err = pool_with_predictions
    reported = [line for line in err.splitlines() if line.startswith("spare-gen: predictions:")]
    assert len(reported) == len(broken), err  # one line per bad file
    for path in broken.values():
        assert sum(str(path) in line for line in reported) == 1, (path, reported)
    assert "Traceback" not in err

    table = pq.read_table(out / "corruptions.parquet").to_pandas()
    methods = table[table["kind"].str.startswith("method:")]
    assert sorted(methods["kind"].unique()) == ["method:broken", "method:noisy", "method:perfect"]
    assert methods["severity"].isna().all()
    perfect = methods[methods["kind"] == "method:perfect"]
    assert len(perfect) == N_MODELS and (perfect["status"] == "ok").all()
    assert (perfect["corner_f1"] == 1.0).all() and (perfect["edge_f1"] == 1.0).all()
    noisy = methods[methods["kind"] == "method:noisy"]
    assert (noisy["status"] == "ok").all() and (noisy["edge_f1"] < 1.0).any()
    failed = methods[methods["kind"] == "method:broken"]
    assert (failed["status"] == "failed").all() and len(failed) == 3
    assert failed["overlay_png"].isna().all()
    for row in methods[methods["status"] == "ok"].itertuples():
        assert (out / row.overlay_png).is_file() and (out / row.geometry_json).is_file()
        assert "method" not in row.overlay_png and row.corruption_id not in ("perfect", "noisy")

    pairs = pd.read_parquet(out / "pairs.parquet")
    shown = set(pairs["left_id"]) | set(pairs["right_id"])
    assert set(perfect["corruption_id"]) <= shown and not set(failed["corruption_id"]) & shown


def test_the_perfect_method_ranks_first(pool_with_predictions, tmp_path):
    out, _, _ = pool_with_predictions
    table = pq.read_table(out / "corruptions.parquet").to_pandas()
    quality = dict(zip(table["corruption_id"], table["corner_f1"].fillna(0) + table["edge_f1"].fillna(0)))
    pairs = pd.read_parquet(out / "pairs.parquet")
    answers = simulate_judgements(pairs, quality, {"r1": 0.95, "r2": 0.9, "r3": 0.85}, seed=5)
    csv = tmp_path / "answers.csv"
    answers.to_csv(csv, index=False)
    assert main(["rank", str(out), str(csv)]) == 0
    ranking = pq.read_table(out / "reports" / "ranking.parquet").to_pandas()
    item = next(c for c in ranking.columns if ranking[c].astype(str).str.contains("method:perfect").any())
    ordered = ranking.sort_values("bt_ability", ascending=False)[item].astype(str).tolist()
    assert ordered[0] == "method:perfect", ordered
    assert "method:noisy" in ordered and "method:broken" not in ordered
    assert "method:perfect" in (out / "reports" / "ranking.md").read_text()


def test_a_missing_predictions_folder_stops_before_any_work(tmp_path, capsys):
    config = tmp_path / "pool.toml"
    config.write_text(CONFIG.format(n=N_MODELS))
    args = ["--config", str(config), "--out", str(tmp_path / "out"), "--predictions", str(tmp_path / "nope")]
    code = main(["pool", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "nope" in err[0] and "does not exist" in err[0], err
    assert not (tmp_path / "out").exists()
