"""Pairs of wireframe corruptions shown to human raters, with sanity and repeat pairs for rater reliability.

Following Sec. 4 "Rater Reliability" of the wireframe-metrics paper: raters compare two corruptions of
the same ground truth; every low-vs-high pair of one corruption kind is a ``sanity`` pair with a known
winner (the low side), and about 5 % of the pairs come back later, sides swapped, as ``repeat`` pairs
to measure self-consistency. All randomness of a model comes from ``derive_rng(seed, "pairs",
model_id)``, so a model's pairs do not depend on which other models are processed or in what order.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from spare_gen.rating.answers_format import ANSWERS_FORMAT
from spare_gen.atomic import write_text
from spare_gen.config.schema import PoolConfig
from spare_gen.rng import derive_rng
from spare_gen.rating.corruptions import Severity
from spare_gen.rows import Row, arrow_schema, column

REPEAT_FRACTION = PoolConfig.model_fields["repeat_fraction"].default  # the config's default, declared there


class PairType(StrEnum):
    REGULAR = "regular"
    SANITY = "sanity"
    REPEAT = "repeat"


class Side(StrEnum):
    LEFT = "left"
    RIGHT = "right"


class Choice(StrEnum):
    LEFT = "left"
    RIGHT = "right"
    EQUAL = "equal"


CORRUPTION_COLUMNS = ("corruption_id", "model_id", "kind", "severity", "png")
# pairs.parquet's row (the pool stage's schema module re-exports it), its schema generated from it


@dataclass(frozen=True, kw_only=True)
class PairRow(Row):
    """One row of pairs.parquet: two corruptions of one model to compare, in the order raters see them."""

    pair_id: str | None = column(pa.string())
    model_id: str | None = column(pa.string())
    left_id: str | None = column(pa.string())
    right_id: str | None = column(pa.string())
    left_png: str | None = column(pa.string())
    right_png: str | None = column(pa.string())
    pair_type: str | None = column(pa.string())
    expected: str | None = column(pa.string())  # "left" | "right" | null
    repeat_of: str | None = column(pa.string())  # pair_id | null
    order: int | None = column(pa.int64())
    seed: int | None = column(pa.int64())


PAIRS_SCHEMA = arrow_schema(PairRow)
PAIR_COLUMNS = tuple(PAIRS_SCHEMA.names)
RATING_PAIRS_COLUMNS = ("pair_id", "left_image", "right_image")
ANSWER_COLUMNS = ("pair_id", "rater_id", "choice")  # required in every answers file
# optional, written by `spare-gen annotate`: is_repeat (0/1, the rater's second judgement of a pair_id),
# shown_swapped (0/1), answered_at (ISO UTC), response_ms, position (index in the rater's session)
ANSWER_EXTRA_COLUMNS = ("is_repeat", "shown_swapped", "answered_at", "response_ms", "position")
ANSWER_FILE_COLUMNS = ANSWER_COLUMNS + ANSWER_EXTRA_COLUMNS
FLAG_VALUES = ("0", "1")
_OTHER_SIDE = {Side.LEFT.value: Side.RIGHT.value, Side.RIGHT.value: Side.LEFT.value}
MIN_REPEAT_GAP = 5  # a repeat is shown at least this many pairs after its original when there is room

ANSWERS_FORMAT = """\
Annotation tool input (written by export_rating_pairs_csv): UTF-8 CSV with header
    pair_id,left_image,right_image
one row per pair in showing order; images are paths relative to the dataset root.

""" + ANSWERS_FORMAT


def _check_corruptions(corruptions: pd.DataFrame) -> None:
    missing = [c for c in CORRUPTION_COLUMNS if c not in corruptions.columns]
    if missing:
        raise ValueError(f"corruptions table lacks columns {missing}; needs {list(CORRUPTION_COLUMNS)}")
    for column in ("corruption_id", "model_id", "png"):
        if corruptions[column].isna().any():
            rows = corruptions.index[corruptions[column].isna()].tolist()
            raise ValueError(f"corruptions table has empty {column} in rows {_listed(rows)}")
    dup = corruptions["corruption_id"][corruptions["corruption_id"].duplicated()]
    if len(dup):
        raise ValueError(f"corruptions table repeats corruption_id {_listed(sorted(set(dup)))}")


def _check_options(max_pairs_per_model: int | None, repeat_fraction: float) -> None:
    if not 0.0 <= repeat_fraction <= 1.0:
        raise ValueError(f"repeat_fraction {repeat_fraction!r} must be within [0, 1]")
    if max_pairs_per_model is not None and max_pairs_per_model < 1:
        raise ValueError(f"max_pairs_per_model {max_pairs_per_model!r} must be a positive integer or None")


def _is_sanity(a: pd.Series, b: pd.Series) -> bool:
    """Low vs high of the same corruption kind: the low side is the obvious winner."""
    severities = {str(a["severity"]), str(b["severity"])}
    same_kind = pd.notna(a["kind"]) and a["kind"] == b["kind"]
    return same_kind and severities == {Severity.LOW.value, Severity.HIGH.value}


def _distinct_pairs(
    v: pd.DataFrame, model_id: str, max_pairs: int | None, rng: np.random.Generator
) -> list[tuple[int, int, bool]]:
    """(row i, row j, is_sanity) with i < j: all pairs, or every sanity pair plus sampled regular ones."""
    rows = [v.iloc[k] for k in range(len(v))]
    pairs = [(i, j, _is_sanity(rows[i], rows[j])) for i in range(len(v)) for j in range(i + 1, len(v))]
    if max_pairs is None or len(pairs) <= max_pairs:
        return pairs
    sanity = [p for p in pairs if p[2]]
    regular = [p for p in pairs if not p[2]]
    if len(sanity) > max_pairs:
        raise ValueError(
            f"model {model_id!r} has {len(sanity)} sanity pairs, more than max_pairs_per_model={max_pairs}"
        )
    keep = np.sort(rng.choice(len(regular), size=max_pairs - len(sanity), replace=False))
    return sorted(sanity + [regular[k] for k in keep])


def make_model_pairs(
    corruptions: pd.DataFrame,
    seed: int,
    *,
    max_pairs_per_model: int | None = None,
    repeat_fraction: float = REPEAT_FRACTION,
) -> pd.DataFrame:
    """Pairs of one model's corruptions; ``order`` counts from 0 within the model (see :func:`make_pairs`)."""
    _check_corruptions(corruptions)
    _check_options(max_pairs_per_model, repeat_fraction)
    model_ids = sorted(map(str, corruptions["model_id"].unique()))
    if len(model_ids) != 1:
        raise ValueError(f"make_model_pairs needs the corruptions of one model, got {_listed(model_ids)}")
    model_id = str(model_ids[0])
    rng = derive_rng(seed, "pairs", model_id)
    v = corruptions.sort_values("corruption_id", kind="stable").reset_index(drop=True)
    distinct = _distinct_pairs(v, model_id, max_pairs_per_model, rng)

    flips = rng.random(len(distinct)) < 0.5  # True: the row with the larger corruption_id goes left
    entries = []
    for (i, j, sanity), flip in zip(distinct, flips):
        left, right = (v.iloc[j], v.iloc[i]) if flip else (v.iloc[i], v.iloc[j])
        expected = None
        if sanity:
            expected = Side.LEFT.value if str(left["severity"]) == Severity.LOW.value else Side.RIGHT.value
        pair_type = PairType.SANITY if sanity else PairType.REGULAR
        entries.append(
            {"left": left, "right": right, "pair_type": pair_type.value, "expected": expected, "of": None}
        )
    sequence = [entries[k] for k in rng.permutation(len(entries))]

    n_repeats = int(round(repeat_fraction * len(entries)))
    for k in rng.choice(len(entries), size=n_repeats, replace=False):
        original = entries[k]
        at = next(p for p, e in enumerate(sequence) if e is original)
        lowest = min(at + 1 + MIN_REPEAT_GAP, len(sequence))
        swapped = _OTHER_SIDE.get(original["expected"])
        repeat = {"left": original["right"], "right": original["left"], "pair_type": PairType.REPEAT.value,
                  "expected": swapped, "of": original}  # fmt: skip
        sequence.insert(int(rng.integers(lowest, len(sequence) + 1)), repeat)

    ids = {id(e): f"{model_id}-p{n:04d}" for n, e in enumerate(sequence)}
    rows = [
        PairRow(
            pair_id=ids[id(e)], model_id=model_id,
            left_id=str(e["left"]["corruption_id"]), right_id=str(e["right"]["corruption_id"]),
            left_png=str(e["left"]["png"]), right_png=str(e["right"]["png"]),
            pair_type=e["pair_type"], expected=e["expected"],
            repeat_of=None if e["of"] is None else ids[id(e["of"])], order=n, seed=int(seed),
        ).as_dict()
        for n, e in enumerate(sequence)
    ]
    return _as_frame(rows)


def _as_frame(rows: list[dict]) -> pd.DataFrame:
    """A pairs DataFrame with ``None`` (not NaN) in the nullable columns."""
    frame = pd.DataFrame({c: pd.Series([r[c] for r in rows], dtype=object) for c in PAIR_COLUMNS})
    return frame.astype({"order": np.int64, "seed": np.int64})


def make_pairs(
    corruptions: pd.DataFrame,
    seed: int,
    *,
    max_pairs_per_model: int | None = None,
    repeat_fraction: float = REPEAT_FRACTION,
) -> pd.DataFrame:
    """Annotation pairs of all models: blocks per model (sorted by model_id), ``order`` global from 0.

    ``max_pairs_per_model`` caps the distinct pairs of a model (sanity pairs always kept, regular
    ones sampled); ``repeat_fraction`` of them, rounded, is shown again later with sides swapped.
    """
    _check_corruptions(corruptions)
    _check_options(max_pairs_per_model, repeat_fraction)
    blocks, offset = [], 0
    for model_id in sorted(corruptions["model_id"].astype(str).unique()):
        block = make_model_pairs(
            corruptions[corruptions["model_id"].astype(str) == model_id],
            seed,
            max_pairs_per_model=max_pairs_per_model,
            repeat_fraction=repeat_fraction,
        )
        block["order"] += offset
        offset += len(block)
        blocks.append(block)
    if not blocks:
        return _as_frame([])
    return pd.concat(blocks, ignore_index=True)


def pairs_to_arrow(pairs: pd.DataFrame) -> pa.Table:
    """The ``pairs.parquet`` table with its fixed schema (write it with ``spare_gen.atomic.write_parquet``)."""
    table = pa.Table.from_pandas(pairs[list(PAIR_COLUMNS)], schema=PAIRS_SCHEMA, preserve_index=False)
    return table.replace_schema_metadata(None)


def export_rating_pairs_csv(pairs: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``pair_id,left_image,right_image`` in showing order for the annotation tool (atomically)."""
    table = pairs.sort_values("order", kind="stable")[["pair_id", "left_png", "right_png"]]
    table.columns = list(RATING_PAIRS_COLUMNS)
    buffer = io.StringIO()
    table.to_csv(buffer, index=False, lineterminator="\n")
    return write_text(path, buffer.getvalue())


def _listed(values, limit: int = 5) -> str:
    values = list(values)
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return f"{values[:limit]}{more}"


def answer_problems(answers: pd.DataFrame, pairs: pd.DataFrame | None = None) -> list[str]:
    """Every problem of an answers table (str columns pair_id, rater_id, choice), as short phrases.

    Line numbers are those of the CSV file (header on line 1). Unknown pair ids are checked when
    ``pairs`` is given.
    """
    problems = []
    for column in ("pair_id", "rater_id"):
        empty = np.flatnonzero(answers[column] == "") + 2  # +2: header line, 1-based lines
        if len(empty):
            problems.append(f"empty {column} on lines {_listed(empty.tolist())}")
    if pairs is not None:
        unknown = sorted(set(answers["pair_id"]) - set(pairs["pair_id"].astype(str)) - {""})
        if unknown:
            problems.append(f"unknown pair ids {_listed(unknown)}")
    bad = sorted(set(answers["choice"]) - {c.value for c in Choice})
    if bad:
        problems.append(f"bad choices {_listed(bad)} (choose from left, right, equal)")
    is_repeat = answers["is_repeat"] if "is_repeat" in answers.columns else pd.Series("0", index=answers.index)
    bad = sorted(set(is_repeat) - set(FLAG_VALUES))
    if bad:
        problems.append(f"bad is_repeat {_listed(bad)} (choose from 0, 1)")
    keyed = answers.assign(is_repeat=is_repeat)
    twice = keyed[keyed.duplicated(["pair_id", "rater_id", "is_repeat"])]
    if len(twice):
        repeated = [tuple(pair) for pair in twice[["pair_id", "rater_id"]].values.tolist()]
        problems.append(f"repeated answers for (pair_id, rater_id) {_listed(repeated)}")
    firsts = set(map(tuple, keyed.loc[keyed["is_repeat"] == "0", ["pair_id", "rater_id"]].values.tolist()))
    seconds = keyed.loc[keyed["is_repeat"] == "1", ["pair_id", "rater_id"]].values.tolist()
    orphans = [tuple(key) for key in seconds if tuple(key) not in firsts]
    if orphans:
        problems.append(f"is_repeat=1 answers without a first answer for (pair_id, rater_id) {_listed(orphans)}")
    return problems


# what to do when no answers exist yet (rank, learn-metric): rate, or dry-run the study with simulated raters
NO_ANSWERS_YET = ("raters add theirs with `spare-gen annotate POOL`, or `spare-gen simulate-raters POOL` writes simulated "
                  "ones into POOL/annotations to dry-run the study")


def answer_files(path: str | os.PathLike) -> list[Path]:
    """The answers CSV itself, or every ``*.csv`` of a folder (sorted); one-line errors when there are none."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.csv") if p.is_file())
        if not files:
            raise FileNotFoundError(f"answers folder {str(path)!r} has no *.csv files yet: {NO_ANSWERS_YET}")
        return files
    if not path.is_file():
        if not path.suffix:  # a folder named for answers that nobody wrote yet
            raise FileNotFoundError(f"answers folder {str(path)!r} does not exist: {NO_ANSWERS_YET}")
        raise FileNotFoundError(f"answers file {str(path)!r} does not exist")
    return [path]


def _read_answer_file(path: Path, pairs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """One answers CSV as str columns (required + optional present; is_repeat filled with 0) and its problems."""
    answers = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in ANSWER_COLUMNS if c not in answers.columns]
    if missing:
        raise ValueError(f"answers file {str(path)!r} lacks columns {missing}; needs {list(ANSWER_COLUMNS)}")
    columns = [c for c in ANSWER_FILE_COLUMNS if c in answers.columns]
    answers = answers[columns].apply(lambda column: column.str.strip())
    if "is_repeat" not in answers.columns:
        answers["is_repeat"] = "0"
    return answers, answer_problems(answers, pairs)


def read_answers(path: str | os.PathLike, pairs: pd.DataFrame) -> pd.DataFrame:
    """Read and validate an answers CSV or a folder of them (see :data:`ANSWERS_FORMAT`); join with the pairs.

    Raises one ``ValueError`` naming every problem (per file): missing columns, empty cells, unknown
    pair ids, bad choices or is_repeat flags, a rater answering the same pair twice (is_repeat=1 rows
    aside). The result has ``is_repeat`` as int (0 when the file had no such column).
    """
    frames, problems = [], []
    for file in answer_files(path):
        answers, found = _read_answer_file(file, pairs)
        problems += [f"answers file {str(file)!r}: " + "; ".join(found)] if found else []
        frames.append(answers)
    if problems:
        raise ValueError("; ".join(problems))
    answers = pd.concat(frames, ignore_index=True)
    if len(frames) > 1:
        across = answer_problems(answers)
        if across:
            raise ValueError(f"answers folder {str(path)!r} (files together): " + "; ".join(across))
    answers["is_repeat"] = answers["is_repeat"].astype(np.int64)
    return answers.merge(pairs, on="pair_id", how="left", validate="many_to_one")
