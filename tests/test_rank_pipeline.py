"""End-to-end `spare_gen.jobs.rank.run` on a small hand-made pool with simulated annotations."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from scipy.stats import kendalltau

from spare_gen.jobs.rank import run
from spare_gen.ranking import simulate_judgements

KINDS = ("deform", "perturb", "add", "remove")
SEVERITIES = ("low", "medium", "high")
# hidden truth: 'remove' is the best kind here, so a result that merely followed kind order would fail
KIND_QUALITY = {"remove": 3.0, "add": 2.0, "perturb": 1.0, "deform": 0.0}
SEVERITY_QUALITY = {"low": 0.6, "medium": 0.3, "high": 0.0}
METRICS = {"corner_f1": True, "wed": False}


def write_pool(out: Path, n_models: int = 3) -> dict[str, float]:
    """pairs.parquet and corruptions.parquet in the producers' schema; returns the hidden quality per variant."""
    variants, pairs, quality = [], [], {}
    for m in range(n_models):
        model = f"m{m}"
        ids = []
        for kind, severity in itertools.product(KINDS, SEVERITIES):
            vid = f"{model}-{kind}-{severity}"
            q = KIND_QUALITY[kind] + SEVERITY_QUALITY[severity]
            quality[vid] = q
            ids.append(vid)
            variants.append({"corruption_id": vid, "model_id": model, "kind": kind, "severity": severity, "seed": 0,
                             "vertices": [0.0, 0.0, 0.0], "corner_f1": q / 4.0, "wed": -q, "edge_f1": 0.5})
        for i, (a, b) in enumerate(itertools.combinations(ids, 2)):
            left, right = (a, b) if i % 2 else (b, a)
            pairs.append({"pair_id": f"{model}-p{i:02d}", "model_id": model, "left_id": left, "right_id": right,
                          "pair_type": "regular", "expected": None, "repeat_of": None})
        for kind in KINDS:
            pairs.append({"pair_id": f"{model}-s-{kind}", "model_id": model, "left_id": f"{model}-{kind}-low",
                          "right_id": f"{model}-{kind}-high", "pair_type": "sanity", "expected": "left",
                          "repeat_of": None})
    for p in [p for p in pairs if p["pair_type"] == "regular"][::8]:
        pairs.append({**p, "pair_id": p["pair_id"] + "-r", "left_id": p["right_id"], "right_id": p["left_id"],
                      "pair_type": "repeat", "repeat_of": p["pair_id"]})
    pairs = pd.DataFrame(pairs)
    pairs["left_png"], pairs["right_png"] = pairs["left_id"] + ".png", pairs["right_id"] + ".png"
    pairs["order"], pairs["seed"] = np.arange(len(pairs)), 0
    pairs.to_parquet(out / "pairs.parquet")
    pd.DataFrame(variants).to_parquet(out / "corruptions.parquet")
    return quality


@pytest.fixture
def pool(tmp_path) -> tuple[Path, Path]:
    quality = write_pool(tmp_path)
    pairs = pd.read_parquet(tmp_path / "pairs.parquet")
    answers = simulate_judgements(pairs, quality, {"ace": 1.0, "b": 0.85, "c": 0.8, "d": 0.75}, seed=11)
    csv = tmp_path / "annotations.csv"
    answers.to_csv(csv, index=False)
    return tmp_path, csv


def test_run_writes_reports_and_ranks_the_truly_best_type_first(pool):
    out, csv = pool
    result = run(out, csv, higher_is_better=METRICS)
    reports = out / "reports"
    names = ("ranking.md", "ranking.parquet", "rater_reliability.parquet", "metric_agreement.parquet", "ranking.png",
             "ranking.svg", "ranking.pdf")
    for name in names:
        assert (reports / name).is_file(), name
    assert result["top_item"] == "remove/low" and result["n_items"] == 12 and result["n_raters"] == 4

    ranking = pd.read_parquet(reports / "ranking.parquet")
    assert list(ranking["item"].iloc[[0, -1]]) == ["remove/low", "deform/high"]
    assert list(ranking["rank"]) == list(range(1, 13))
    assert ranking["bt_ability"].is_monotonic_decreasing
    assert ((ranking["win_rate_low"] < ranking["win_rate"]) & (ranking["win_rate"] < ranking["win_rate_high"])).all()

    reliability = pd.read_parquet(reports / "rater_reliability.parquet").set_index("rater_id")
    assert reliability.loc["ace", ["sanity_accuracy", "self_consistency"]].tolist() == [1.0, 1.0]
    assert reliability.loc["ace", "n_sanity"] == 12
    assert reliability["n_judgements"].eq(len(pd.read_parquet(out / "pairs.parquet"))).all()

    agreement = pd.read_parquet(reports / "metric_agreement.parquet")
    overall = agreement[agreement.scope == "all"].set_index("metric")
    # both metrics order every pair like the hidden quality, so the perfect rater agrees fully with them
    assert set(overall.index) == {"corner_f1", "wed"}
    per_rater = agreement[agreement.scope == "rater"].set_index(["metric", "rater_id"])
    assert per_rater.loc[("corner_f1", "ace"), "agreement"] == 1.0
    assert per_rater.loc[("wed", "d"), "agreement"] < per_rater.loc[("wed", "ace"), "agreement"]

    markdown = (reports / "ranking.md").read_text()
    assert "| 1 | remove/low |" in markdown and "## Rater reliability" in markdown and "| 95 % low | 95 % high |" in markdown
    assert "| corner_f1 | higher |" in markdown and "| wed | lower |" in markdown
    with Image.open(reports / "ranking.png") as image:
        assert image.format == "PNG" and image.width > 400 and image.height > 12 * 20


def test_run_is_reproducible(pool):
    out, csv = pool
    run(out, csv, higher_is_better=METRICS)
    first = {p.name: p.read_bytes() for p in (out / "reports").iterdir()}
    run(out, csv, higher_is_better=METRICS)
    assert first == {p.name: p.read_bytes() for p in (out / "reports").iterdir()}


def test_run_variant_items_notes_unconnected_groups(pool):
    out, csv = pool
    result = run(out, csv, item="variant", higher_is_better={"corner_f1": True})
    assert result["n_items"] == 36 and result["top_item"].endswith("-remove-low")
    assert "3 groups that never meet" in (out / "reports" / "ranking.md").read_text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pair_id,rater\nm0-p00,a\n", r"lacks columns \['rater_id', 'choice'\]"),
        ("pair_id,rater_id,choice\nm0-p00,a,better\n", r"bad choices \['better'\]"),
        ("pair_id,rater_id,choice\nm0-p00,a,left\nm9-p00,a,left\nzz,a,left\n", r"unknown pair ids \['m9-p00', 'zz'\]"),
        ("pair_id,rater_id,choice\nm0-p00,a,left\nm0-p00,a,equal\n", r"repeated answers"),
    ],
)
def test_run_rejects_bad_annotations_with_one_line(pool, text, message):
    out, csv = pool
    csv.write_text(text)
    with pytest.raises(ValueError, match=message) as error:
        run(out, csv, higher_is_better=METRICS)
    assert "\n" not in str(error.value)
    assert not (out / "reports").exists()


def test_run_rejects_unknown_item_and_missing_inputs(pool, tmp_path):
    out, csv = pool
    with pytest.raises(ValueError, match="unknown item 'model'; choose from type, variant"):
        run(out, csv, item="model")
    with pytest.raises(FileNotFoundError, match="pairs.parquet"):
        run(tmp_path / "empty", csv)


def test_run_can_rank_from_regular_pairs_only(pool):
    out, csv = pool
    everything = run(out, csv, higher_is_better=METRICS)
    regular = run(out, csv, higher_is_better=METRICS, pair_types=["regular"])
    n_raters, n_regular = 4, 3 * 66
    assert regular["n_judgements"] == n_raters * n_regular < everything["n_judgements"]
    assert regular["top_item"] == "remove/low"


def test_rank_recovers_two_planted_rater_groups_and_both_orders(tmp_path):
    quality = write_pool(tmp_path, n_models=4)
    reverse = {vid: -q for vid, q in quality.items()}  # the second group prefers the opposite
    pairs = pd.read_parquet(tmp_path / "pairs.parquet")
    group_a = simulate_judgements(pairs, quality, {f"sim-a{i}": 0.9 for i in range(4)}, seed=1)
    group_b = simulate_judgements(pairs, reverse, {f"sim-b{i}": 0.9 for i in range(3)}, seed=2)
    csv = tmp_path / "answers.csv"
    pd.concat([group_a, group_b]).to_csv(csv, index=False)
    result = run(tmp_path, csv, quiet=True)
    clusters = result["clusters"]
    assert {clusters[f"sim-a{i}"] for i in range(4)} == {1}  # the larger group is group 1
    assert {clusters[f"sim-b{i}"] for i in range(3)} == {2}
    rankings = pd.read_parquet(result["cluster_rankings"])
    truth = {f"{k}/{s}": KIND_QUALITY[k] + SEVERITY_QUALITY[s] for k in KINDS for s in SEVERITIES}
    for cluster, sign in ((1, 1.0), (2, -1.0)):
        table = rankings[rankings["cluster"] == cluster]
        tau = kendalltau(table["bt_ability"], sign * table["item"].map(truth)).statistic
        assert tau > 0.8, (cluster, tau)
    assert result["simulated"] is True
    md = Path(result["ranking_md"]).read_text()
    assert "simulated raters" in md and "## Rater groups" in md and "### Ranking of group 2" in md
    majority = pd.read_parquet(result["majority_error"])
    assert list(majority["panel_size"]) == [1, 3, 5, 7, 9]
    assert majority["p_wrong_winner"].iloc[0] > majority["p_wrong_winner"].dropna().iloc[-1]


def test_rank_counts_repeats_once_and_uses_them_for_self_consistency(pool):
    out, csv = pool
    pairs = pd.read_parquet(out / "pairs.parquet")
    answers = pd.read_csv(csv)
    n_repeat_answers = int(answers["pair_id"].isin(pairs.loc[pairs["pair_type"] == "repeat", "pair_id"]).sum())
    assert n_repeat_answers > 0
    result = run(out, csv, quiet=True)
    assert result["n_judgements"] == len(answers) - n_repeat_answers
    reliability = pd.read_parquet(result["rater_reliability"])
    assert (reliability["n_repeat"] > 0).all()  # the repeats still measure self-consistency
    # an is_repeat column marks the rater app's second judgements: they are dropped the same way
    marked = answers.assign(is_repeat=0)
    first_regular = marked.index[~marked["pair_id"].isin(pairs.loc[pairs["pair_type"] == "repeat", "pair_id"])][0]
    extra = marked.loc[[first_regular]].assign(is_repeat=1)
    marked_csv = out / "marked.csv"
    pd.concat([marked, extra]).to_csv(marked_csv, index=False)
    try:
        again = run(out, marked_csv, quiet=True)
    except ValueError as exc:  # the answers reader may refuse a second answer on one (pair, rater)
        assert "pair" in str(exc)
    else:
        assert again["n_judgements"] == result["n_judgements"]


def test_rank_prints_a_summary(pool, capsys):
    out, csv = pool
    run(out, csv)
    printed = capsys.readouterr().out
    assert "spare-gen rank:" in printed and "best:" in printed and "rater groups" in printed


def test_rank_warns_when_items_have_too_few_judgements_and_writes_to_dest(pool, capsys, tmp_path):
    from spare_gen.jobs.rank import MIN_JUDGEMENTS_PER_ITEM

    out, csv = pool
    answers = pd.read_csv(csv)
    few = tmp_path / "few.csv"
    answers[answers["rater_id"] == "ace"].head(3).to_csv(few, index=False)  # 3 judgements in all
    dest = tmp_path / "elsewhere"
    result = run(out, few, dest=dest)
    err = capsys.readouterr().err
    assert f"at least {MIN_JUDGEMENTS_PER_ITEM} per item" in err and "WARNING" in err and "mostly noise" in err
    assert Path(result["ranking_md"]).parent == dest and (dest / "ranking.parquet").is_file()
    assert "mostly noise" in (dest / "ranking.md").read_text()
    assert not (out / "reports").exists()  # an earlier report there would have been left alone
    run(out, csv)  # every rater: enough judgements per type
    assert "WARNING" not in capsys.readouterr().err
