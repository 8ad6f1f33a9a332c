"""Per-rater reliability (paper Sec. 4): accuracy on sanity pairs and self-consistency on repeated pairs.

Sanity accuracy: share of pairs with a known winner (``expected`` set: the sanity pairs, low vs high
severity of one corruption, and their side-swapped repeats) where the rater picked the expected
side; 'equal' is not the expected answer, so it counts as wrong.
Self-consistency: a repeat pair shows the original two corruptions again (sides swapped); the rater is
consistent when they pick the same *corruption* both times, or 'equal' both times.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from spare_gen.ranking.judgements import SIDES, Choice, PairType, validate_answers, validate_pairs

RELIABILITY_COLUMNS = (
    "rater_id",
    "n_judgements",
    "n_equal",
    "equal_rate",
    "n_sanity",
    "sanity_correct",
    "sanity_accuracy",
    "n_repeat",
    "repeat_consistent",
    "self_consistency",
)
_EQUAL_MARK = "\x00equal"  # stands for "no corruption chosen" when comparing chosen corruptions


def chosen_corruption(table: pd.DataFrame) -> pd.Series:
    """The corruption id a rater picked (left_id / right_id), or a marker for 'equal'."""
    return pd.Series(
        np.select(
            [table["choice"] == Choice.LEFT.value, table["choice"] == Choice.RIGHT.value],
            [table["left_id"].astype(str), table["right_id"].astype(str)],
            _EQUAL_MARK,
        ),
        index=table.index,
    )


def rater_reliability(pairs: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """One row per rater with the RELIABILITY_COLUMNS; rates are NaN when the rater saw no such pair."""
    validate_pairs(pairs)
    answers = validate_answers(answers, pairs)
    info = pairs.loc[:, ["pair_id", "pair_type", "expected", "repeat_of", "left_id", "right_id"]].copy()
    info["pair_id"] = info["pair_id"].astype(str)
    table = answers.merge(info, on="pair_id", how="left", validate="many_to_one")
    table["picked"] = chosen_corruption(table)

    raters = sorted(table["rater_id"].unique())
    by_rater = table.groupby("rater_id")
    out = pd.DataFrame(index=pd.Index(raters, name="rater_id"))
    out["n_judgements"] = by_rater.size()
    out["n_equal"] = by_rater["choice"].apply(lambda c: int((c == Choice.EQUAL.value).sum()))

    sanity = table[table["expected"].isin(SIDES)]
    correct = (sanity["choice"] == sanity["expected"]).groupby(sanity["rater_id"])
    out["n_sanity"] = correct.size()
    out["sanity_correct"] = correct.sum()

    # a repeat is a pool repeat pair (its own pair_id, repeat_of set) or a rater's second judgement (is_repeat=1)
    second = table[table["is_repeat"] == 1].assign(repeat_of=lambda t: t["pair_id"])
    repeats = pd.concat([table[(table["pair_type"] == PairType.REPEAT.value) & (table["is_repeat"] == 0)], second])
    originals = table.loc[table["is_repeat"] == 0, ["pair_id", "rater_id", "picked"]].rename(
        columns={"pair_id": "repeat_of", "picked": "picked_first"}
    )
    matched = repeats.merge(originals, on=["repeat_of", "rater_id"], how="inner")
    consistent = (matched["picked"] == matched["picked_first"]).groupby(matched["rater_id"])
    out["n_repeat"] = consistent.size()
    out["repeat_consistent"] = consistent.sum()

    out = out.fillna(0).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["equal_rate"] = out["n_equal"] / out["n_judgements"]
        out["sanity_accuracy"] = out["sanity_correct"] / out["n_sanity"].where(out["n_sanity"] > 0)
        out["self_consistency"] = out["repeat_consistent"] / out["n_repeat"].where(out["n_repeat"] > 0)
    return out.reset_index().loc[:, list(RELIABILITY_COLUMNS)]
