"""The metric property report and the ranking, run through the CLI on the default config's corrupted pool."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from spare_gen.cli import main
from spare_gen.ranking import simulate_judgements

SEVERITY_QUALITY = {"low": 3.0, "medium": 2.0, "high": 1.0}


def _pool_copy(dataset: Path, dest: Path) -> Path:
    """Reports go into a copy (symlinked inputs), so the shared dataset is not changed."""
    dest.mkdir()
    for name in ("wireframes.parquet", "corruptions.parquet", "pairs.parquet", "pool"):
        (dest / name).symlink_to(dataset / name)
    return dest


def test_metric_report_on_default_pool(small_dataset, tmp_path):
    out = _pool_copy(small_dataset, tmp_path / "pool")
    assert main(["metric-report", str(out), "--max-models", "2"]) == 0
    table = pq.read_table(out / "reports" / "metric_properties.parquet").to_pandas()
    markdown = (out / "reports" / "metric_properties.md").read_text()
    assert "corner_f1" in markdown and "edge_f1" in markdown
    assert set(table["metric"]) >= {"corner_f1", "edge_f1", "wed", "jaccard_distance", "spectral"}
    assert (table["n_passed"] <= table["n_cases"]).all()
    rated, unrated = table[table["n_cases"] > 0], table[table["n_cases"] == 0]
    assert len(rated) and rated["pass_rate"].between(0, 1).all()
    # a test no wireframe of the pool applies to (e.g. too few vertices to delete) has no rate and does not pass
    assert unrated["pass_rate"].isna().all() and not unrated["passed"].any() and (unrated["n_excluded"] > 0).all()
    assert (table["passed"] == (table["pass_rate"] >= 0.9)).all()
    identity = table[table["test"] == "Identity of indiscernibles"]  # "Near identity" depends on the pool's shapes
    assert len(identity) and identity["passed"].all(), identity  # every metric scores a wireframe as itself


def test_rank_on_default_pool_recovers_severity_order(small_dataset, tmp_path):
    out = _pool_copy(small_dataset, tmp_path / "pool")
    variants = pq.read_table(small_dataset / "corruptions.parquet", columns=["corruption_id", "severity"]).to_pandas()
    quality = {r.corruption_id: SEVERITY_QUALITY[r.severity] for r in variants.itertuples()}
    pairs = pq.read_table(small_dataset / "pairs.parquet").to_pandas()
    answers = simulate_judgements(pairs, quality, {"r1": 0.95, "r2": 0.9, "r3": 0.85}, seed=3)
    csv = tmp_path / "answers.csv"
    answers.to_csv(csv, index=False)
    assert main(["rank", str(out), str(csv)]) == 0
    ranking = pq.read_table(out / "reports" / "ranking.parquet").to_pandas()
    for name in ("ranking.md", "ranking.png", "rater_reliability.parquet", "metric_agreement.parquet"):
        assert (out / "reports" / name).stat().st_size > 0
    item_col = next(c for c in ranking.columns if ranking[c].astype(str).str.contains("/").all())
    ability = dict(zip(ranking[item_col].astype(str), ranking["bt_ability"]))
    for kind in ("deform", "perturb", "add", "remove"):
        assert ability[f"{kind}/low"] > ability[f"{kind}/high"], kind
    reliability = pq.read_table(out / "reports" / "rater_reliability.parquet").to_pandas()
    assert set(reliability["rater_id"]) == {"r1", "r2", "r3"}
