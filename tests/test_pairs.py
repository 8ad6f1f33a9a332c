"""Annotation pairs: counts, sanity winners, swapped repeats, determinism, CSV export and answer checks."""

from itertools import combinations

import pandas as pd
import pyarrow.parquet as pq
import pytest

from spare_gen.atomic import write_parquet
from spare_gen.rating.pairs import (
    ANSWERS_FORMAT,
    export_rating_pairs_csv,
    make_pairs,
    pairs_to_arrow,
    read_answers,
)

KINDS = ("deform", "perturb", "add", "remove")
SEVERITIES = ("low", "medium", "high")


def _variants(model_id: str, extra_deform_low: bool = False) -> list[dict]:
    rows = [
        {"corruption_id": f"{model_id}-{k}-{s}", "model_id": model_id, "kind": k, "severity": s,
         "png": f"overlays/{model_id}/{k}_{s}.png"}
        for k in KINDS
        for s in SEVERITIES
    ]  # fmt: skip
    rows.append({"corruption_id": f"{model_id}-gt", "model_id": model_id, "kind": None, "severity": None,
                 "png": f"overlays/{model_id}/gt.png"})  # fmt: skip
    if extra_deform_low:
        rows.append({"corruption_id": f"{model_id}-deform-low-b", "model_id": model_id, "kind": "deform",
                     "severity": "low", "png": f"overlays/{model_id}/deform_low_b.png"})  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def variants() -> pd.DataFrame:
    # m1: 14 variants (91 pairs, 5 sanity: one low-high per kind + the second deform low); m2: 13 (78, 4)
    return pd.DataFrame(_variants("m1", extra_deform_low=True) + _variants("m2"))


@pytest.fixture(scope="module")
def pairs(variants) -> pd.DataFrame:
    return make_pairs(variants, seed=11)


def test_all_pairs_plus_rounded_five_percent_repeats(pairs):
    counts = pairs.groupby(["model_id", "pair_type"]).size().to_dict()
    # m1: 91 distinct = 86 regular + 5 sanity, round(0.05 * 91) = 5 repeats; m2: 78 = 74 + 4, round(3.9) = 4
    assert counts == {("m1", "regular"): 86, ("m1", "sanity"): 5, ("m1", "repeat"): 5,
                      ("m2", "regular"): 74, ("m2", "sanity"): 4, ("m2", "repeat"): 4}  # fmt: skip
    assert sorted(pairs["order"]) == list(range(len(pairs)))
    assert pairs["pair_id"].is_unique


def test_every_unordered_pair_of_a_model_appears_once(pairs, variants):
    for model_id, group in variants.groupby("model_id"):
        shown = pairs[(pairs["model_id"] == model_id) & (pairs["pair_type"] != "repeat")]
        got = sorted(tuple(sorted(p)) for p in zip(shown["left_id"], shown["right_id"]))
        assert got == sorted(combinations(sorted(group["corruption_id"]), 2))


def test_sides_are_randomised(pairs):
    distinct = pairs[pairs["pair_type"] != "repeat"]
    left_first = (distinct["left_id"] < distinct["right_id"]).mean()
    assert 0.3 < left_first < 0.7


def test_sanity_pairs_are_low_vs_high_of_one_kind_with_low_expected(pairs, variants):
    info = variants.set_index("corruption_id")
    sanity = pairs[pairs["pair_type"] == "sanity"]
    assert sorted(sanity[sanity["model_id"] == "m1"]["left_id"].map(info["kind"]).tolist()) == sorted(
        ["deform", "deform", "perturb", "add", "remove"]
    )
    for row in sanity.itertuples():
        assert info.loc[row.left_id, "kind"] == info.loc[row.right_id, "kind"]
        assert {info.loc[row.left_id, "severity"], info.loc[row.right_id, "severity"]} == {"low", "high"}
        winner = row.left_id if row.expected == "left" else row.right_id
        assert info.loc[winner, "severity"] == "low"
    assert pairs[pairs["pair_type"] == "regular"]["expected"].isna().all()
    assert pairs[pairs["pair_type"] == "regular"]["expected"].map(lambda x: x is None).all()


def test_repeats_are_swapped_copies_shown_later(pairs):
    by_id = pairs.set_index("pair_id")
    repeats = pairs[pairs["pair_type"] == "repeat"]
    assert len(repeats) == 9
    for row in repeats.itertuples():
        original = by_id.loc[row.repeat_of]
        assert original["pair_type"] != "repeat" and original["model_id"] == row.model_id
        assert (row.left_id, row.right_id) == (original["right_id"], original["left_id"])
        assert (row.left_png, row.right_png) == (original["right_png"], original["left_png"])
        assert row.order > original["order"]
        flipped = {"left": "right", "right": "left", None: None}[original["expected"]]
        assert row.expected == flipped
    assert pairs[pairs["pair_type"] != "repeat"]["repeat_of"].map(lambda x: x is None).all()


def test_deterministic_and_independent_of_other_models_and_row_order(variants, pairs):
    pd.testing.assert_frame_equal(make_pairs(variants, seed=11), pairs)
    assert not make_pairs(variants, seed=12)[["left_id", "right_id"]].equals(pairs[["left_id", "right_id"]])
    only_m2 = make_pairs(variants[variants["model_id"] == "m2"].iloc[::-1], seed=11)
    m2 = pairs[pairs["model_id"] == "m2"].reset_index(drop=True)
    assert (m2["order"] - only_m2["order"]).eq(91 + 5).all()  # m1's block comes first
    pd.testing.assert_frame_equal(m2.drop(columns="order"), only_m2.drop(columns="order"))


def test_sample_keeps_every_sanity_pair(variants):
    sampled = make_pairs(variants, seed=3, max_pairs_per_model=20, repeat_fraction=0.1)
    counts = sampled.groupby(["model_id", "pair_type"]).size().to_dict()
    assert counts == {("m1", "regular"): 15, ("m1", "sanity"): 5, ("m1", "repeat"): 2,
                      ("m2", "regular"): 16, ("m2", "sanity"): 4, ("m2", "repeat"): 2}  # fmt: skip
    with pytest.raises(ValueError, match="5 sanity pairs, more than max_pairs_per_model=4"):
        make_pairs(variants, seed=3, max_pairs_per_model=4)


def test_no_repeats_when_fraction_is_zero(variants):
    assert (make_pairs(variants, seed=11, repeat_fraction=0.0)["pair_type"] != "repeat").all()


def test_bad_variant_tables_are_rejected(variants):
    with pytest.raises(ValueError, match=r"lacks columns \['png'\]"):
        make_pairs(variants.drop(columns="png"), seed=1)
    with pytest.raises(ValueError, match="repeats corruption_id"):
        make_pairs(pd.concat([variants, variants.iloc[:1]]), seed=1)
    with pytest.raises(ValueError, match="repeat_fraction 1.5"):
        make_pairs(variants, seed=1, repeat_fraction=1.5)
    with pytest.raises(ValueError, match=r"empty png in rows \[2\]"):
        make_pairs(variants.assign(png=variants["png"].where(variants.index != 2, None)), seed=1)
    with pytest.raises(ValueError, match="max_pairs_per_model 0"):
        make_pairs(variants, seed=1, max_pairs_per_model=0)


def test_parquet_round_trip_keeps_nulls(pairs, tmp_path):
    write_parquet(tmp_path / "pairs.parquet", pairs_to_arrow(pairs))
    back = pq.read_table(tmp_path / "pairs.parquet")
    assert back.schema.field("expected").type == "string"
    assert back.column("repeat_of").null_count == 169  # every distinct pair (91 + 78)
    assert back.column("pair_id").to_pylist() == pairs["pair_id"].tolist()


def test_annotation_csv_in_showing_order(pairs, tmp_path):
    path = export_rating_pairs_csv(pairs.iloc[::-1], tmp_path / "tool" / "pairs.csv")
    lines = path.read_text().splitlines()
    first = pairs[pairs["order"] == 0].iloc[0]
    assert lines[0] == "pair_id,left_image,right_image"
    assert lines[1] == f"{first.pair_id},{first.left_png},{first.right_png}"
    assert [line.split(",")[0] for line in lines[1:]] == pairs.sort_values("order")["pair_id"].tolist()
    assert "pair_id,rater_id,choice" in ANSWERS_FORMAT


def _answers(tmp_path, text: str):
    path = tmp_path / "answers.csv"
    path.write_text(text)
    return path


def test_read_answers_joins_valid_answers(pairs, tmp_path):
    a, b = pairs["pair_id"].iloc[0], pairs["pair_id"].iloc[1]
    path = _answers(tmp_path, f"pair_id,rater_id,choice\n{a},A,left\n{b},A,equal\n{a},B, right\n")
    got = read_answers(path, pairs)
    rows = got[["pair_id", "rater_id", "choice"]].values.tolist()
    assert rows == [[a, "A", "left"], [b, "A", "equal"], [a, "B", "right"]]
    assert got["left_id"].tolist()[0] == pairs["left_id"].iloc[0]


def test_read_answers_names_every_problem_on_one_line(pairs, tmp_path):
    a = pairs["pair_id"].iloc[0]
    with pytest.raises(ValueError, match=r"lacks columns \['choice'\]"):
        read_answers(_answers(tmp_path, f"pair_id,rater_id\n{a},A\n"), pairs)
    text = f"pair_id,rater_id,choice\n{a},A,left\nm9-p0001,A,left\n{a},B,maybe\n{a},A,right\n,C,left\n"
    with pytest.raises(ValueError) as caught:
        read_answers(_answers(tmp_path, text), pairs)
    message = str(caught.value)
    assert "\n" not in message
    assert "unknown pair ids ['m9-p0001']" in message
    assert "bad choices ['maybe']" in message
    assert f"repeated answers for (pair_id, rater_id) [('{a}', 'A')]" in message
    assert "empty pair_id on lines [6]" in message
