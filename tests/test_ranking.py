"""Ranking from pairwise judgements: win rates, BT/Elo, quality factor, reliability, agreement, simulated raters."""

from __future__ import annotations

import io
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from scipy.stats import kendalltau

from spare_gen.ranking import (
    agreement_scores,
    build_judgements,
    elo_scores,
    fit_bradley_terry,
    implied_win_rates,
    item_labels,
    matchups,
    metric_agreement,
    metric_directions,
    metric_preference,
    quality_factor,
    rank_items,
    ranking_png,
    rater_reliability,
    simulate_judgements,
    validate_answers,
    win_rates,
)
from spare_gen.ranking.plot import KIND_COLOURS

KINDS = ("deform", "perturb", "add", "remove")
SEVERITIES = ("low", "medium", "high")
KIND_QUALITY = {"add": 3.0, "perturb": 2.0, "remove": 1.0, "deform": 0.0}
SEVERITY_QUALITY = {"low": 0.6, "medium": 0.3, "high": 0.0}
TYPE_QUALITY = {f"{k}/{s}": KIND_QUALITY[k] + SEVERITY_QUALITY[s] for k in KINDS for s in SEVERITIES}


def make_pool(n_models: int, repeat_every: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every model has one variant per type; all 66 type pairs per model, 4 sanity pairs, some repeats."""
    variants, pairs = [], []
    for m in range(n_models):
        model = f"m{m}"
        ids = []
        for kind, severity in itertools.product(KINDS, SEVERITIES):
            vid = f"{model}-{kind}-{severity}"
            ids.append(vid)
            variants.append({"corruption_id": vid, "model_id": model, "kind": kind, "severity": severity, "seed": 0})
        for i, (a, b) in enumerate(itertools.combinations(ids, 2)):
            left, right = (a, b) if i % 2 else (b, a)
            pairs.append({"pair_id": f"{model}-p{i:02d}", "model_id": model, "left_id": left, "right_id": right,
                          "pair_type": "regular", "expected": None, "repeat_of": None})
        for kind in KINDS:
            pairs.append({"pair_id": f"{model}-s-{kind}", "model_id": model, "left_id": f"{model}-{kind}-high",
                          "right_id": f"{model}-{kind}-low", "pair_type": "sanity", "expected": "right",
                          "repeat_of": None})
    for p in [p for p in pairs if p["pair_type"] == "regular"][::repeat_every]:
        pairs.append({**p, "pair_id": p["pair_id"] + "-r", "left_id": p["right_id"], "right_id": p["left_id"],
                      "pair_type": "repeat", "repeat_of": p["pair_id"]})
    pairs = pd.DataFrame(pairs)
    pairs["order"], pairs["seed"] = np.arange(len(pairs)), 0
    return pairs, pd.DataFrame(variants)


def hidden_quality(variants: pd.DataFrame) -> dict[str, float]:
    return {v: TYPE_QUALITY[f"{k}/{s}"] for v, k, s in zip(variants.corruption_id, variants.kind, variants.severity)}


def judged(rows: list[tuple[str, str, str]], rater: str = "r") -> pd.DataFrame:
    """Judgements directly on items: (left_item, right_item, choice)."""
    score = {"left": 1.0, "equal": 0.5, "right": 0.0}
    return pd.DataFrame(
        {"left_item": [a for a, _, _ in rows], "right_item": [b for _, b, _ in rows],
         "left_score": [score[c] for _, _, c in rows], "rater_id": rater}
    )


# --- win rates --------------------------------------------------------------------------------------


def test_win_rates_hand_computed_with_ties_and_same_item_dropped():
    j = judged([("A", "B", "left"), ("B", "A", "equal"), ("B", "C", "right"), ("C", "A", "left"), ("A", "A", "left")])
    table = win_rates(j)
    assert table.loc["A", ["games", "wins", "ties", "losses"]].tolist() == [3, 1, 1, 1]
    assert table.loc["C", ["games", "wins", "ties", "losses"]].tolist() == [2, 2, 0, 0]
    assert table["win_rate"].to_dict() == pytest.approx({"A": 1.5 / 3, "B": 0.5 / 3, "C": 1.0})


# --- Bradley-Terry and Elo --------------------------------------------------------------------------


def test_bt_two_items_gives_log_odds_and_laplace_stderr():
    j = judged([("A", "B", "left")] * 3 + [("B", "A", "left")])  # A wins 3 of 4
    fit = fit_bradley_terry(matchups(j), l2=1e-9)
    assert fit.items == ("A", "B")
    assert fit.ability[0] - fit.ability[1] == pytest.approx(math.log(3), abs=1e-6)
    assert fit.ability.sum() == pytest.approx(0.0, abs=1e-12)
    # var(theta_A - theta_B) = 1 / (n p (1 - p)); centred theta_A is half the difference
    assert fit.stderr[0] == pytest.approx(0.5 / math.sqrt(4 * 0.75 * 0.25), rel=1e-4)


def test_bt_counts_a_tie_as_half_a_win():
    j = judged([("A", "B", "left"), ("A", "B", "equal"), ("B", "A", "equal"), ("A", "B", "right")])
    fit = fit_bradley_terry(matchups(j), l2=1e-9)
    assert fit.ability == pytest.approx([0.0, 0.0], abs=1e-6)
    j = judged([("A", "B", "left"), ("A", "B", "equal")])  # 1.5 of 2 -> odds 3
    fit = fit_bradley_terry(matchups(j), l2=1e-9)
    assert fit.ability[0] - fit.ability[1] == pytest.approx(math.log(3), abs=1e-6)


def test_bt_stays_finite_under_perfect_separation():
    j = judged([("A", "B", "left")] * 5 + [("B", "C", "left")] * 5)
    fit = fit_bradley_terry(matchups(j), l2=1e-2)
    assert np.all(np.isfinite(fit.ability)) and fit.ability[0] > fit.ability[1] > fit.ability[2]
    with pytest.raises(ValueError, match="l2 must be > 0"):
        fit_bradley_terry(matchups(j), l2=0.0)


def test_bt_implied_win_rate_equals_empirical_at_the_optimum():
    j = judged([("A", "B", "left"), ("A", "B", "right"), ("B", "C", "left"), ("C", "B", "equal"),
                ("C", "A", "left"), ("A", "C", "left"), ("A", "C", "left"), ("B", "A", "equal")])
    pooled = matchups(j)
    fit = fit_bradley_terry(pooled, l2=1e-9)
    assert implied_win_rates(fit.ability, pooled) == pytest.approx(win_rates(j)["win_rate"].to_numpy(), abs=1e-6)


def test_bt_recovers_hidden_order_and_elo_and_factor_agree():
    pairs, variants = make_pool(n_models=5)
    answers = simulate_judgements(pairs, hidden_quality(variants), raters=[0.8] * 20, seed=1)
    ranking = rank_items(build_judgements(pairs, answers, item_labels(variants)))
    table = ranking.table
    truth = table["item"].map(TYPE_QUALITY)
    assert kendalltau(table["bt_ability"], truth).statistic >= 0.9
    assert table["item"].iloc[0] == "add/low" and table["item"].iloc[-1] == "deform/high"
    # Elo is the paper's rescaling: same order, same implied win rates, 400 points per unit of ability
    assert table["elo"].to_numpy() == pytest.approx(400 * table["bt_ability"].to_numpy() + 800)
    assert list(table.sort_values("elo", ascending=False)["item"]) == list(table["item"])
    assert table["implied_win_rate_elo"].to_numpy() == pytest.approx(table["implied_win_rate_bt"].to_numpy())
    assert table["implied_win_rate_bt"].to_numpy() == pytest.approx(table["win_rate"].to_numpy(), abs=1e-3)
    assert kendalltau(table["bt_ability"], table["quality_factor"]).statistic > 0.7
    assert ranking.factor.explained > 0.8  # one dominant quality factor, as the simulation has


def test_few_noisy_judgements_recover_less():
    """The recovery test above can fail: a near-random rater on one model does not get tau >= 0.9."""
    pairs, variants = make_pool(n_models=1)
    answers = simulate_judgements(pairs, hidden_quality(variants), raters=[0.55], seed=2)
    table = rank_items(build_judgements(pairs, answers, item_labels(variants))).table
    assert kendalltau(table["bt_ability"], table["item"].map(TYPE_QUALITY)).statistic < 0.9


def test_elo_scores_formula():
    assert elo_scores(np.array([0.0, 1.0, -2.0])) == pytest.approx([800.0, 1200.0, 0.0])
    assert elo_scores(np.array([1.0]), scale=100, offset=0) == pytest.approx([100.0])


# --- quality factor -----------------------------------------------------------------------------------


def test_quality_factor_of_a_rank_one_table_orders_items_and_is_sign_fixed():
    # two raters who agree completely: A beats B beats C, every time
    rows = [("A", "B", "left"), ("B", "C", "left"), ("C", "A", "right")]
    j = pd.concat([judged(rows, "r1"), judged(rows, "r2")], ignore_index=True)
    factor = quality_factor(j, ["A", "B", "C"], clip=0.1)
    # win rates 1, 0.5, 0 -> log-odds (+L, 0, -L) for both raters: exactly rank one
    assert factor.explained == pytest.approx(1.0)
    assert factor.scores.to_numpy() == pytest.approx([1 / math.sqrt(2), 0.0, -1 / math.sqrt(2)])
    with pytest.raises(ValueError, match="clip"):
        quality_factor(j, clip=0.5)


# --- rater reliability --------------------------------------------------------------------------------


RELIABILITY_PAIRS = pd.DataFrame(
    [
        ("s1", "m", "lo", "hi", "sanity", "left", None),
        ("s2", "m", "hi", "lo", "sanity", "right", None),
        ("p1", "m", "x", "y", "regular", None, None),
        ("r1", "m", "y", "x", "repeat", None, "p1"),  # p1 again, sides swapped
        ("r2", "m", "lo", "hi", "repeat", "left", "s2"),  # a repeated sanity pair keeps a known winner
    ],
    columns=["pair_id", "model_id", "left_id", "right_id", "pair_type", "expected", "repeat_of"],
)


def test_rater_reliability_hand_made():
    answers = pd.DataFrame(
        [
            ("s1", "good", "left"), ("s2", "good", "right"), ("p1", "good", "left"), ("r1", "good", "right"),
            ("r2", "good", "left"),
            ("s1", "flip", "right"), ("s2", "flip", "left"), ("p1", "flip", "left"), ("r1", "flip", "left"),
            ("r2", "flip", "right"),
            ("s1", "tie", "equal"), ("s2", "tie", "right"), ("p1", "tie", "equal"), ("r1", "tie", "equal"),
            ("p1", "once", "right"), ("r1", "half", "equal"), ("p1", "half", "left"),
        ],
        columns=["pair_id", "rater_id", "choice"],
    )
    table = rater_reliability(RELIABILITY_PAIRS, answers).set_index("rater_id")
    assert table.loc["good", ["n_sanity", "sanity_accuracy", "n_repeat", "self_consistency"]].tolist() == [3, 1, 2, 1]
    # 'flip' always picks the worse side: wrong on all 3 known winners, yet consistently so on s2/r2 (1 of 2)
    assert table.loc["flip", ["n_sanity", "sanity_accuracy", "n_repeat", "self_consistency"]].tolist() == [3, 0, 2, 0.5]
    assert table.loc["tie", ["sanity_accuracy", "self_consistency", "equal_rate"]].tolist() == [0.5, 1.0, 0.75]
    assert table.loc["half", ["n_repeat", "repeat_consistent", "self_consistency"]].tolist() == [1, 0, 0.0]
    assert table.loc["once", ["n_judgements", "n_sanity", "n_repeat"]].tolist() == [1, 0, 0]
    assert math.isnan(table.loc["once", "sanity_accuracy"]) and math.isnan(table.loc["once", "self_consistency"])


# --- metric agreement ---------------------------------------------------------------------------------


def test_metric_preference_and_agreement_scores():
    assert metric_preference([0.9, 0.5, 0.5], [0.5, 0.9, 0.5 + 1e-13], True).tolist() == ["left", "right", "equal"]
    assert metric_preference([0.9, 0.5], [0.5, 0.9], False).tolist() == ["right", "left"]
    got = agreement_scores(["left", "left", "left", "equal", "equal"], ["left", "right", "equal", "right", "equal"])
    assert got.tolist() == [1.0, 0.0, 0.5, 0.5, 1.0]


def test_metric_agreement_hand_computed_with_ties():
    values = pd.DataFrame(
        {"hi": [0.9, 0.5, 0.5, np.nan], "lo": [0.1, 0.3, 0.3 + 1e-13, 0.2]}, index=["v1", "v2", "v3", "v4"]
    )
    j = pd.DataFrame(
        [
            ("v1", "v2", "a", "left"),  # hi: left -> 1     lo: left -> 1
            ("v2", "v3", "a", "left"),  # hi: equal -> 0.5  lo: equal (1e-13 apart) -> 0.5
            ("v3", "v1", "b", "left"),  # hi: right -> 0    lo: right -> 0
            ("v2", "v1", "b", "equal"),  # hi: right -> 0.5  lo: right -> 0.5
            ("v2", "v3", "b", "equal"),  # hi: equal -> 1    lo: equal -> 1
            ("v4", "v1", "b", "left"),  # hi: NaN -> skipped; lo: right -> 0
        ],
        columns=["left_id", "right_id", "rater_id", "choice"],
    )
    table = metric_agreement(j, values, {"hi": True, "lo": False}).set_index(["metric", "scope", "rater_id"], drop=True)
    hi_all = table.xs(("hi", "all"), level=("metric", "scope")).iloc[0]
    got = (hi_all["n"], hi_all["agreement"], hi_all["n_decisive"], hi_all["agreement_decisive"])
    assert got == (5, pytest.approx(0.6), 2, 0.5)
    assert table.loc[("hi", "rater", "a"), "agreement"] == pytest.approx(0.75)
    assert table.loc[("hi", "rater", "b"), "agreement"] == pytest.approx(0.5)
    lo_all = table.xs(("lo", "all"), level=("metric", "scope")).iloc[0]
    assert (lo_all["n"], lo_all["agreement"]) == (6, pytest.approx(3.0 / 6))
    with pytest.raises(ValueError, match="lack columns"):
        metric_agreement(j, values, {"absent": True})


def test_metric_directions_from_mapping_or_registry():
    assert metric_directions({"edge_f1": False}) == {"edge_f1": False}  # the caller overrides the registry
    with pytest.raises(ValueError, match="must be bool"):
        metric_directions({"wed": "lower"})
    registry = metric_directions()
    assert registry["corner_f1"] is True and registry["edge_recall"] is True
    assert registry["wed"] is False and registry["jaccard_distance"] is False and registry["edge_chamfer"] is False


# --- annotation validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "columns", "message"),
    [
        ([("p1", "a")], ["pair_id", "rater_id"], r"missing columns \['choice'\]"),
        ([("p1", "a", "LEFT"), ("p1", "b", "")], None, r"bad choices \['', 'LEFT'\]"),
        ([("p1", "a", "left"), ("nope", "a", "left")], None, r"unknown pair ids \['nope'\]"),
        ([("p1", "a", "left"), ("p1", "a", "right")], None, r"repeated answers for \(pair_id, rater_id\) \[\('p1', 'a'\)\]"),
        ([("p1", "", "left")], None, r"empty rater_id on lines \[2\]"),
    ],
)
def test_annotation_validation_errors_are_one_line(rows, columns, message):
    answers = pd.DataFrame(rows, columns=columns or ["pair_id", "rater_id", "choice"])
    with pytest.raises(ValueError, match=message) as error:
        validate_answers(answers, RELIABILITY_PAIRS)
    assert "\n" not in str(error.value)


def test_judgements_join_items_and_reject_unknown_variants():
    answers = pd.DataFrame({"pair_id": ["p1", "s1"], "rater_id": ["a", "a"], "choice": ["left", "equal"]})
    labels = pd.Series(["T1", "T2", "T3", "T3"], index=["x", "y", "lo", "hi"])
    j = build_judgements(RELIABILITY_PAIRS, answers, labels, pair_types=["regular", "sanity"])
    got = j[["pair_id", "left_item", "right_item", "left_score"]].values.tolist()
    assert got == [["p1", "T1", "T2", 1.0], ["s1", "T3", "T3", 0.5]]
    with pytest.raises(ValueError, match="missing from the corruptions table: 'hi', 'lo'"):
        build_judgements(RELIABILITY_PAIRS, answers, labels.iloc[:2])
    with pytest.raises(ValueError, match="unknown pair types 'easy'; choose from regular, sanity, repeat"):
        build_judgements(RELIABILITY_PAIRS, answers, labels, pair_types=["regular", "easy"])


# --- simulated raters ---------------------------------------------------------------------------------


def test_simulated_raters_follow_accuracy_and_are_reproducible():
    pairs, variants = make_pool(n_models=2)
    quality = hidden_quality(variants)
    perfect = simulate_judgements(pairs, quality, {"p": 1.0, "w": 0.0}, seed=7)
    truth = pairs.set_index("pair_id")
    q_left = truth["left_id"].map(quality)
    q_right = truth["right_id"].map(quality)
    best_side = np.where(q_left > q_right, "left", "right")
    expected = pd.Series(best_side, index=truth.index)
    p = perfect[perfect.rater_id == "p"].set_index("pair_id")["choice"]
    w = perfect[perfect.rater_id == "w"].set_index("pair_id")["choice"]
    assert (p == expected.reindex(p.index)).all()
    assert not (w == expected.reindex(w.index)).any()
    assert set(w) == {"left", "right", "equal"}
    # reproducible, independent of other raters and of the row order of pairs
    again = simulate_judgements(pairs.iloc[::-1], quality, {"w": 0.0}, seed=7)
    pd.testing.assert_frame_equal(again, perfect[perfect.rater_id == "w"].reset_index(drop=True))
    assert not simulate_judgements(pairs, quality, {"w": 0.0}, seed=8).equals(again)
    # ties: qualities within the margin are 'equal' for an accurate rater
    tied = simulate_judgements(pairs, quality, [1.0], seed=0, tie_margin=10.0)
    assert set(tied["choice"]) == {"equal"} and list(tied.columns) == ["pair_id", "rater_id", "choice"]
    noisy = simulate_judgements(pairs, quality, [0.7] * 10, seed=0)
    accuracy = (noisy["choice"].to_numpy() == expected.reindex(noisy["pair_id"]).to_numpy()).mean()
    assert accuracy == pytest.approx(0.7, abs=0.03)
    with pytest.raises(ValueError, match="lacks corruptions"):
        simulate_judgements(pairs, {}, 1)
    with pytest.raises(ValueError, match="accuracies must be in"):
        simulate_judgements(pairs, quality, [1.5])


# --- plot ---------------------------------------------------------------------------------------------


def test_ranking_png_draws_bars_in_kind_colours_with_length_by_win_rate():
    table = pd.DataFrame({"item": ["add/low", "deform/high"], "win_rate": [0.75, 0.25], "elo": [1200.0, 400.0]})
    with Image.open(io.BytesIO(ranking_png(table))) as image:
        counts = {colour: n for n, colour in image.convert("RGB").getcolors(1 << 20)}
    add, deform = counts.get(KIND_COLOURS["add"], 0), counts.get(KIND_COLOURS["deform"], 0)
    assert KIND_COLOURS["remove"] not in counts and deform > 0
    assert add / deform == pytest.approx(3.0, rel=0.03)  # same bar height, lengths 0.75 : 0.25


def test_a_missing_answers_folder_is_named_a_folder_with_how_answers_come_and_a_missing_csv_a_file(tmp_path):
    from spare_gen.rating.pairs import answer_files

    with pytest.raises(FileNotFoundError, match=r"^answers folder '.*annotations' does not exist: raters add theirs"):
        answer_files(tmp_path / "annotations")
    with pytest.raises(FileNotFoundError, match=r"^answers file '.*alice\.csv' does not exist$"):
        answer_files(tmp_path / "alice.csv")
