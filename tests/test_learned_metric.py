"""`spare-gen simulate-raters` and `spare-gen learn-metric` through the CLI on a hand-made pool."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from spare_gen.cli import main
from spare_gen.ranking.learned import LearnedMetric
from spare_gen.rng import derive_rng
from tests.test_rank_pipeline import write_pool


@pytest.fixture
def pool(tmp_path):
    """The rank tests' pool (10 models x 12 variants, all pairs) with three independent random metrics."""
    write_pool(tmp_path, n_models=10)
    variants = pd.read_parquet(tmp_path / "corruptions.parquet")
    rng = derive_rng(0, "test-learned")
    variants["corner_f1"] = rng.random(len(variants))
    variants["edge_f1"] = rng.random(len(variants))
    variants["edge_chamfer"] = rng.random(len(variants))  # lower is better
    variants = variants.drop(columns=["wed"])
    variants.to_parquet(tmp_path / "corruptions.parquet")
    return tmp_path


def test_learn_metric_beats_every_single_metric_when_people_mix_two(pool, capsys):
    answers = pool / "answers.csv"
    code = main(["simulate-raters", str(pool), "--raters", "0.9,0.9,0.85,0.85,0.8",
                 "--truth", "corner_f1=1,edge_chamfer=1", "--answers", str(answers)])  # fmt: skip
    assert code == 0 and answers.is_file()
    table = pd.read_csv(answers)
    assert set(table.columns) >= {"pair_id", "rater_id", "choice"}
    assert table["rater_id"].str.startswith("sim-").all()

    assert main(["learn-metric", str(pool), str(answers)]) == 0
    printed = capsys.readouterr().out
    assert "cross-validated agreement" in printed
    cv = pd.read_parquet(pool / "reports" / "learned_metric_cv.parquet").set_index("metric")["agreement"]
    singles = cv.drop("learned")
    assert cv["learned"] > singles.max() + 0.02, cv.to_dict()
    assert singles.idxmax() in {"corner_f1", "edge_chamfer"}
    model = LearnedMetric.from_json((pool / "reports" / "learned_metric.json").read_text())
    weights = dict(zip(model.metrics, model.weights))
    # the two hidden ingredients carry nearly equal, large weights; the unused metric almost none
    assert weights["corner_f1"] > 0 and weights["edge_chamfer"] > 0
    assert abs(weights["edge_f1"]) < 0.25 * min(weights["corner_f1"], weights["edge_chamfer"])
    scores = pd.read_parquet(pool / "reports" / "learned_scores.parquet")
    assert len(scores) == 120 and np.isfinite(scores["learned"]).all()
    assert "Cross-validated agreement" in (pool / "reports" / "learned_metric.md").read_text()

    # rank picks the learned column up as one more metric (higher is better)
    assert main(["rank", str(pool), str(answers)]) == 0
    agreement = pd.read_parquet(pool / "reports" / "metric_agreement.parquet")
    assert "learned" in set(agreement["metric"])


def test_simulate_raters_groups_and_bad_input(pool, capsys):
    answers = pool / "two.csv"
    assert main(["simulate-raters", str(pool), "--group", "0.9,0.9:corner_f1", "--group", "1.0:edge_f1",
                 "--answers", str(answers), "--seed", "3"]) == 0  # fmt: skip
    table = pd.read_csv(answers)
    assert sorted(table["rater_id"].unique()) == ["sim-g1-00", "sim-g1-01", "sim-g2-00"]
    again = pool / "again.csv"
    main(["simulate-raters", str(pool), "--group", "0.9,0.9:corner_f1", "--group", "1.0:edge_f1",
          "--answers", str(again), "--seed", "3"])  # fmt: skip
    assert again.read_bytes() == answers.read_bytes()
    capsys.readouterr()
    assert main(["simulate-raters", str(pool), "--truth", "bogus_metric"]) == 2
    err = capsys.readouterr().err
    assert "bogus_metric" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["learn-metric", str(pool), str(pool / "missing.csv")]) == 2
    assert "missing.csv" in capsys.readouterr().err
    assert main(["learn-metric", str(pool), str(answers), "--metrics", "nope"]) == 2
    assert "'nope'" in capsys.readouterr().err


def test_learned_metric_json_round_trip():
    model = LearnedMetric(("a", "b"), (True, False), (0.5, 1.0), (2.0, 1.0), (1.5, -0.5))
    assert LearnedMetric.from_json(model.to_json()) == model
    values = pd.DataFrame({"a": [0.5, 2.5], "b": [1.0, 0.0]})
    # z = ((a - 0.5) / 2, (-b - 1) / 1): row 0 (0, -2), row 1 (1, -1)
    assert model.score(values).tolist() == pytest.approx([0 * 1.5 + -2 * -0.5, 1 * 1.5 + -1 * -0.5])
    assert json.loads(model.to_json())["kind"] == "logistic-over-metric-differences"
