"""Pairwise human judgements: validation of answers and pairs, and their join with the ranked items.

A *judgement* is one rater's answer on one pair. Everything in ``spare_gen.ranking`` works on the
judgements table built here, with one-line errors naming the bad values. The CSV format itself and
the enums (choices, pair types) belong to :mod:`spare_gen.rating.pairs`, which writes the pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum

import numpy as np
import pandas as pd

from spare_gen.rating.corruptions import CorruptionKind, Severity
from spare_gen.rating.pairs import ANSWER_COLUMNS, Choice, PairType, answer_problems


class Item(str, Enum):
    """What gets ranked: the corruption type (kind/severity, pooled over models) or each single corruption."""

    TYPE = "type"
    VARIANT = "variant"  # the command-line value (rank --item variant) stays


CHOICES = tuple(c.value for c in Choice)
PAIR_TYPES = tuple(t.value for t in PairType)
REPEAT_COLUMN = "is_repeat"  # optional in answers; always in the judgements table (0/1)
PAIR_COLUMNS = ("pair_id", "model_id", "left_id", "right_id", "pair_type", "expected", "repeat_of")
CORRUPTION_COLUMNS = ("corruption_id", "kind", "severity")
KIND_ORDER = tuple(k.value for k in CorruptionKind)
SEVERITY_ORDER = tuple(s.value for s in Severity)
SIDES = (Choice.LEFT.value, Choice.RIGHT.value)
TYPE_SEPARATOR = "/"
# score of the left side for each choice: a win is 1, a tie is half a win for each side
LEFT_SCORE = {Choice.LEFT.value: 1.0, Choice.EQUAL.value: 0.5, Choice.RIGHT.value: 0.0}
_MAX_LISTED = 10


def _listing(values: Iterable[object]) -> str:
    """At most ten sorted values, plus how many more, for a one-line error."""
    values = sorted({str(v) for v in values})
    head = ", ".join(repr(v) for v in values[:_MAX_LISTED])
    return head + (f" (+{len(values) - _MAX_LISTED} more)" if len(values) > _MAX_LISTED else "")


def require_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise one ValueError naming every missing column of ``frame``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} is missing columns {missing}; it has {list(frame.columns)}")


def validate_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """Check pairs.parquet: columns, unique ids, pair types, sanity winners, repeat targets."""
    require_columns(pairs, PAIR_COLUMNS, "pairs table")
    if pairs["pair_id"].duplicated().any():
        duplicated = pairs.loc[pairs["pair_id"].duplicated(), "pair_id"]
        raise ValueError(f"pairs table has duplicate pair_id {_listing(duplicated)}")
    bad_types = set(pairs["pair_type"]) - set(PAIR_TYPES)
    if bad_types:
        choices = ", ".join(PAIR_TYPES)
        raise ValueError(f"pairs table has unknown pair_type {_listing(bad_types)}; choose from {choices}")
    sanity = pairs[pairs["pair_type"] == PairType.SANITY.value]
    bad_expected = set(sanity["expected"]) - set(SIDES)
    if bad_expected:
        raise ValueError(f"sanity pairs have expected {_listing(bad_expected)}; choose from left, right")
    bad_expected = set(pairs["expected"].dropna()) - set(SIDES)
    if bad_expected:
        raise ValueError(f"pairs have expected {_listing(bad_expected)}; choose from left, right or null")
    repeats = pairs[pairs["pair_type"] == PairType.REPEAT.value]
    dangling = set(repeats["repeat_of"]) - set(pairs["pair_id"])
    if dangling:
        raise ValueError(f"repeat pairs point to unknown pair ids {_listing(dangling)}")
    return pairs


def validate_answers(answers: pd.DataFrame, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Check the annotation table: columns, choice values, known pair ids, one answer per (pair, rater, is_repeat).

    Returns a copy with the three columns as str plus ``is_repeat`` as int (0 when absent: a rater's
    first judgement; 1: their second judgement of the same pair_id), sorted by (pair_id, rater_id, is_repeat).
    """
    require_columns(answers, ANSWER_COLUMNS, "answers")
    table = answers.loc[:, list(ANSWER_COLUMNS)].astype(str).apply(lambda column: column.str.strip())
    flags = answers["is_repeat"] if REPEAT_COLUMN in answers.columns else pd.Series(0, index=table.index)
    table[REPEAT_COLUMN] = flags.astype(str).str.strip()
    problems = answer_problems(table, pairs)
    if problems:
        raise ValueError("answers: " + "; ".join(problems))
    table[REPEAT_COLUMN] = table[REPEAT_COLUMN].astype(np.int64)
    return table.sort_values(["pair_id", "rater_id", REPEAT_COLUMN], kind="stable").reset_index(drop=True)


def first_judgements(table: pd.DataFrame) -> pd.DataFrame:
    """The rows that feed a ranking: each rater's first judgement of a pair (``is_repeat`` 0 or absent)."""
    if REPEAT_COLUMN not in table.columns:
        return table
    return table[table[REPEAT_COLUMN] == 0].reset_index(drop=True)


def type_label(kind: str, severity: str | None) -> str:
    """'deform/high'; a corruption without severity (e.g. an uncorrupted reference) is just its kind."""
    if severity is None or (isinstance(severity, float) and np.isnan(severity)) or severity == "":
        return str(kind)
    return f"{kind}{TYPE_SEPARATOR}{severity}"


def item_labels(corruptions: pd.DataFrame, item: str | Item = Item.TYPE) -> pd.Series:
    """Map corruption id -> the ranked item's label (its type 'kind/severity', or the corruption id itself)."""
    item = Item(item)
    require_columns(corruptions, CORRUPTION_COLUMNS if item is Item.TYPE else CORRUPTION_COLUMNS[:1], "corruptions table")
    ids = corruptions["corruption_id"].astype(str)
    if item is Item.VARIANT:
        labels = ids.to_numpy()
    else:
        labels = [type_label(k, s) for k, s in zip(corruptions["kind"], corruptions["severity"])]
    return pd.Series(labels, index=ids.to_numpy(), name="item")


def type_sort_key(label: str) -> tuple:
    """Canonical order of type labels: by kind, then severity low < medium < high; unknowns last."""
    kind, _, severity = label.partition(TYPE_SEPARATOR)
    k = KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
    s = SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else -1
    return (k, kind, s, severity)


def build_judgements(
    pairs: pd.DataFrame,
    answers: pd.DataFrame,
    item_of: Mapping[str, str] | pd.Series | None = None,
    *,
    pair_types: Iterable[str] = PAIR_TYPES,
) -> pd.DataFrame:
    """One row per (pair, rater) answer, joined with the pair and the items on each side.

    Columns: pair_id, rater_id, choice, is_repeat, pair_type, model_id, left_id, right_id, left_item,
    right_item, left_score (1 win, 0.5 tie, 0 loss for the left side). A rater's second judgement of a
    pair (is_repeat=1) stays in the table; :func:`first_judgements` drops it. Without ``item_of`` the items
    are the corruption ids. Only pairs whose type is in ``pair_types`` are kept.
    """
    validate_pairs(pairs)
    answers = validate_answers(answers, pairs)
    pair_types = [str(t) for t in pair_types]
    unknown = set(pair_types) - set(PAIR_TYPES)
    if unknown:
        raise ValueError(f"unknown pair types {_listing(unknown)}; choose from {', '.join(PAIR_TYPES)}")
    info = pairs.loc[:, ["pair_id", "pair_type", "model_id", "left_id", "right_id"]].copy()
    for col in ("pair_id", "model_id", "left_id", "right_id"):
        info[col] = info[col].astype(str)
    table = answers.merge(info, on="pair_id", how="left", validate="many_to_one")
    table = table[table["pair_type"].isin(pair_types)].reset_index(drop=True)
    if item_of is None:
        table["left_item"], table["right_item"] = table["left_id"], table["right_id"]
    else:
        item_of = pd.Series(item_of) if not isinstance(item_of, pd.Series) else item_of
        unknown = (set(table["left_id"]) | set(table["right_id"])) - set(item_of.index.astype(str))
        if unknown:
            raise ValueError(f"pairs show corruptions missing from the corruptions table: {_listing(unknown)}")
        table["left_item"] = table["left_id"].map(item_of).astype(str)
        table["right_item"] = table["right_id"].map(item_of).astype(str)
    table["left_score"] = table["choice"].map(LEFT_SCORE).astype(float)
    return table
