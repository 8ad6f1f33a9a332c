"""What a model sees besides pixels: paths, file names, file sizes and bytes, candidate order, metadata columns.

A dataset can leak its answer without a single pixel: the correct candidate's file under ``.../cut0/``,
a pose number as a file name, the answer file always sorting first in its folder, a larger PNG, or a
column that Hugging Face ``datasets`` hands to a model (every column but the answer) listing the
candidates' poses. These probes describe each choice of a question (a candidate, or for
isometric_to_pose one of the 4 pose classes) by what a shortcut could read:

* ``paths`` - tokens of the choice's file paths (split at ``/ . _ -`` and letter/digit boundaries),
  and whether a token equals a value of the question's scalar columns (the query pose);
* ``file_order`` - the rank of the choice's file among the question's choices in name order (what a
  folder listing shows) and the question's row position in its split relative to the choice;
* ``metadata`` - every exposed non-path column: per-choice list entries (e.g. ``candidate_poses``,
  ``cutters``) and matches with the question's scalar values; columns declared answer keys are left out;
* ``file_bytes`` - per choice file: log size, mean byte and byte entropy (PNG, SVG, STEP), scored by
  the same conditional logit as the pixel probes.

For isometric_to_pose the one drawing's tokens are joined with each class (``k2|...``) and the
class's own value (``choice_poses[k]``) is matched against them, like ``logit.class_design``.
Token probes are a smoothed lookup (``TokenLookup``): per token, how often it was on the answer in
training against how often answer frequencies alone put it there; a choice scores its strongest
token (the sum of all breaks ties); remaining ties are broken at random (derived RNG), so a probe
that learns nothing scores chance.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.audit.features import LAYOUT, Layout
from spare_gen.config.schema import TaskName
from spare_gen.rows import answer_key_fields
from spare_gen.store.packed import drawing_bytes
from spare_gen.stages.questions.schema import PATH_SUFFIXES, split_path
from spare_gen.stages.questions.tasks import TASK_SPECS, dataset_choices

ANSWER_COLUMN = "answer"
# A table's Arrow field can also declare itself an answer key with field metadata answer_key=true.
ANSWER_KEY_METADATA = b"answer_key"
WORD_SPLIT = re.compile(r"[/\\._\-\s]+")  # path parts and words: cut0, 2, png
RUN_SPLIT = re.compile(r"(?<=\d)(?=[A-Za-z])|(?<=[A-Za-z])(?=\d)")  # and their letter and digit runs: cut, 0
SMOOTHING = 1.0  # pseudo-observation added to a token's observed and expected answer counts
SUM_WEIGHT = 1e-3  # share of the summed token weights in a choice's score (ties between strongest tokens)
N_BYTE_FEATURES = 3  # log size, mean byte, byte entropy


def answer_side_columns(task: TaskName) -> tuple[str, ...]:
    """A classes task's one drawing whose class is the answer (its PNG and SVG columns, the spec's
    ``answer_side_prefix``); none for a candidates task."""
    prefix = TASK_SPECS[task].answer_side_prefix
    return (f"{prefix}_png", f"{prefix}_svg") if prefix and LAYOUT[task] is Layout.CLASSES else ()


def is_path_column(name: str) -> bool:
    return name.endswith(PATH_SUFFIXES)


def answer_key_columns(schema: pa.Schema, task: TaskName) -> list[str]:
    """Columns left out of the metadata probe: the answer itself and the answer keys, the columns that hold the
    answer mapping on purpose (documented as not for model input: a probe on them would only rediscover the
    answer), as the task's row declares them (``column(..., answer_key=True)``) or the table's field metadata."""
    declared = answer_key_fields(TASK_SPECS[TaskName(task)].row)
    return [f.name for f in schema if f.name == ANSWER_COLUMN or f.name in declared
            or (f.metadata or {}).get(ANSWER_KEY_METADATA, b"").lower() in (b"1", b"true")]


def tokens(value) -> set[str]:
    """Lower-case tokens of a value: words and their letter/digit runs (``cut0/2.png`` -> cut0, cut, 0, 2, png)."""
    if value is None:
        return set()
    if isinstance(value, (list, tuple)):
        return set().union(*(tokens(v) for v in value)) if value else set()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    words = [w for w in WORD_SPLIT.split(str(value).lower()) if w]
    parts = set(words) | {r for w in words for r in RUN_SPLIT.split(w) if r}
    return {t.lstrip("0") or "0" if t.isdigit() else t for t in parts}


def _json_list(value) -> list | None:
    """A JSON list stored as a string (e.g. ``cutters``), else None."""
    if not isinstance(value, str) or not value.startswith("["):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, list) else None


def _flatten_json(value) -> set[str]:
    if isinstance(value, dict):
        return set().union(*({f"{k}={v}" if not isinstance(v, (dict, list)) else k} | _flatten_json(v)
                             for k, v in value.items())) if value else set()
    if isinstance(value, list):
        return set().union(*(_flatten_json(v) for v in value)) if value else set()
    return {str(value)}


@dataclass
class QuestionView:
    """One question split into per-choice entries and question-level values, by column."""

    n_choices: int
    per_choice: dict[str, list] = field(default_factory=dict)  # column -> n_choices entries
    scalars: dict[str, object] = field(default_factory=dict)  # column -> value


def question_views(table: pa.Table, task: TaskName, columns: list[str], n_choices: int) -> list[QuestionView]:
    """Per row: columns whose value is a list of one entry per choice (or a JSON list of them) vs the rest."""
    rows = table.select(columns).to_pylist()
    out = []
    for row in rows:
        view = QuestionView(n_choices)
        for name, value in row.items():
            listed = value if isinstance(value, list) else _json_list(value)
            if LAYOUT[task] is Layout.CANDIDATES and listed is not None and len(listed) == n_choices:
                view.per_choice[name] = listed
            else:
                view.scalars[name] = value
        out.append(view)
    return out


def choice_tokens(view: QuestionView, task: TaskName, own, match) -> list[frozenset[str]]:
    """Token set of each choice: tokens of the columns ``own(column)`` accepts, and matches with ``match`` columns."""
    n_choices = view.n_choices
    scalar = {c: tokens(v) for c, v in view.scalars.items() if match(c) or own(c)}
    choices = []
    for k in range(n_choices):
        toks: set[str] = set()
        if LAYOUT[task] is Layout.CANDIDATES:
            for c, entries in view.per_choice.items():
                if not own(c):
                    continue
                entry = entries[k]
                mine = _flatten_json(entry) if isinstance(entry, (dict, list)) else tokens(entry)
                toks |= {f"{c}:{t}" for t in mine}
                toks |= {f"match:{c}~{q}" for q, values in scalar.items() if match(q) and mine & values}
        else:  # one drawing and n classes: the question's tokens joined with the class, and class-value matches
            labels = TASK_SPECS[task].choice_column  # the class labels (e.g. the poses behind answers 0..3)
            label = tokens((view.scalars.get(labels) or [None] * n_choices)[k])
            for c, values in scalar.items():
                if c == labels or not own(c):
                    continue
                toks |= {f"k{k}|{c}:{t}" for t in values}
                if label & values:
                    toks.add(f"match:{labels}~{c}")
        choices.append(frozenset(toks))
    return choices


@dataclass
class FolderListing:
    """Name order of the files in a dataset folder (what a folder listing shows), read once per folder."""

    out: Path
    _names: dict[tuple[Path, str], list[str]] = field(default_factory=dict)

    def rank(self, rel_path: str) -> int:
        """Rank of ``rel_path`` among the files of its folder with the same suffix, -1 if unreadable."""
        path = self.out / rel_path
        key = (path.parent, path.suffix)
        if key not in self._names:
            try:
                self._names[key] = sorted(p.name for p in path.parent.iterdir() if p.suffix == path.suffix)
            except OSError:
                self._names[key] = []
        names = self._names[key]
        return names.index(path.name) if path.name in names else -1


def order_tokens(view: QuestionView, task: TaskName, row_index: int, path_columns: list[str],
                 listing: FolderListing) -> list[frozenset]:
    """Per choice: its rank in name order among the question's choice files, and the row position mod n - k."""
    n_choices = view.n_choices
    choices: list[set[str]] = [{f"row:{(row_index - k) % n_choices}"} for k in range(n_choices)]
    for c in path_columns:
        if LAYOUT[task] is Layout.CANDIDATES and c in view.per_choice:
            names = [str(p) for p in view.per_choice[c]]
            for rank, k in enumerate(sorted(range(n_choices), key=lambda i: (names[i], i))):
                choices[k].add(f"{c}:name_rank={rank}")
        elif LAYOUT[task] is Layout.CLASSES and view.scalars.get(c) and c in answer_side_columns(task):
            rank = listing.rank(str(view.scalars[c]))  # one file: where it sorts among its folder's files
            for k in range(n_choices):
                choices[k].add(f"k{k}|{c}:folder_rank={rank}")
    return [frozenset(s) for s in choices]


def byte_features(path: Path | None, out: Path | None = None) -> np.ndarray:
    """log(1 + size), mean byte / 255 and byte entropy (bits) of a file (``path`` relative to ``out`` if given:
    a drawing may be packed in the views table); zeros when it is missing."""
    if path is None:
        return np.zeros(N_BYTE_FEATURES)
    try:
        raw = drawing_bytes(out, str(path)) if out is not None else Path(path).read_bytes()
        data = np.frombuffer(raw, dtype=np.uint8)
    except OSError:
        return np.zeros(N_BYTE_FEATURES)
    if not len(data):
        return np.zeros(N_BYTE_FEATURES)
    p = np.bincount(data, minlength=256) / len(data)
    entropy = float(-(p[p > 0] * np.log2(p[p > 0])).sum())
    return np.array([math.log1p(len(data)), float(data.mean()) / 255.0, entropy])


class TokenLookup:
    """Per token: log of (times on the answer + 1) / (times expected there by answer position alone + 1).

    The expectation sums, over the token's occurrences, the training frequency of the answer at the
    choice that holds it, so a token that only tracks answer frequencies (``k2|...`` in every question)
    weighs 0 and the lookup never learns the position prior (``answer_position`` tests that).
    """

    def __init__(self, smoothing: float = SMOOTHING):
        self.smoothing = smoothing
        self.weights: dict[str, float] = {}

    def fit(self, x: np.ndarray, y: np.ndarray) -> "TokenLookup":
        """``x`` (n, k) of token sets, ``y`` (n,) answers."""
        n_choices = x.shape[1]
        prior = np.bincount(np.asarray(y, dtype=np.int64), minlength=n_choices) / max(len(y), 1)
        on_answer: dict[str, float] = {}
        expected: dict[str, float] = {}
        for row, answer in zip(x, y):
            for k, toks in enumerate(row):
                for t in toks:
                    expected[t] = expected.get(t, 0.0) + prior[k]
                    if k == answer:
                        on_answer[t] = on_answer.get(t, 0.0) + 1.0
        a = self.smoothing
        self.weights = {t: math.log((on_answer.get(t, 0.0) + a) / (e + a)) for t, e in expected.items()}
        return self

    def scores(self, x: np.ndarray) -> np.ndarray:
        """Per choice: its strongest token's weight, then (a thousandth) the sum of all its tokens' weights.

        The strongest token decides (a single telling token, e.g. ``cut0``, is not drowned by many rare
        ones such as fragments of random names); the sum only breaks ties.
        """
        def score(toks) -> float:
            w = [self.weights.get(t, 0.0) for t in toks]
            return (max(w) + SUM_WEIGHT * sum(w)) if w else 0.0

        return np.array([[score(toks) for toks in row] for row in x], dtype=np.float64).reshape(len(x), -1)

    def predict(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The highest-scoring choice per question; ties broken at random."""
        s = self.scores(x)
        if not len(s):
            return np.zeros(0, dtype=np.int64)
        s = s + rng.uniform(0.0, 1e-9, size=s.shape)
        return np.argmax(s, axis=1)


class SurfaceProbe(str, Enum):
    """The probes on what a model sees besides pixels (values are the probe names in the report)."""

    PATHS = "paths"
    FILE_ORDER = "file_order"
    METADATA = "metadata"
    FILE_BYTES = "file_bytes"


TOKEN_PROBES = (SurfaceProbe.PATHS, SurfaceProbe.FILE_ORDER, SurfaceProbe.METADATA)


@dataclass
class TaskColumns:
    """A task's columns by role, from its schema: exposed (all but answer keys), paths, answer-side files."""

    exposed: list[str]
    excluded: list[str]
    paths: list[str]
    choice_files: list[str]  # per-choice file columns (candidate lists) or the one answer-side drawing
    n_choices: int  # choices per question in this dataset (``dataset_choices``)

    @classmethod
    def of(cls, schema: pa.Schema, task: TaskName, n_choices: int) -> "TaskColumns":
        excluded = answer_key_columns(schema, task)
        exposed = [f.name for f in schema if f.name not in excluded]
        paths = [c for c in exposed if is_path_column(c)]
        if LAYOUT[task] is Layout.CANDIDATES:
            files = sorted(f.name for f in schema if f.name in paths and pa.types.is_list(f.type))
        else:
            files = [c for c in answer_side_columns(task) if c in paths]
        return cls(exposed, [c for c in excluded if c != ANSWER_COLUMN], paths, files, n_choices)


def task_columns(out: Path, task: TaskName, splits) -> TaskColumns | None:
    """The columns of the first split file that exists (all splits share one schema), None if none does."""
    for split in splits:
        path = split_path(out, task.value, split)
        if path.is_file():
            return TaskColumns.of(pq.read_schema(path), task, dataset_choices(out, task))
    return None


def surface_data(out: Path, task: TaskName, split: str, probe: SurfaceProbe, columns: TaskColumns,
                 listing: FolderListing) -> tuple[np.ndarray, np.ndarray]:
    """(x, answers): token probes give x (n, k) of token sets; file_bytes gives floats like the pixel probes."""
    n_choices = columns.n_choices
    path = split_path(out, task.value, split)
    d = len(columns.choice_files) * N_BYTE_FEATURES
    if not path.is_file():
        if probe is SurfaceProbe.FILE_BYTES:
            return np.zeros((0, d) if LAYOUT[task] is Layout.CLASSES else (0, n_choices, d)), np.zeros(0, np.int64)
        return np.empty((0, n_choices), dtype=object), np.zeros(0, dtype=np.int64)
    table = pq.read_table(path)
    answers = np.asarray(table.column(ANSWER_COLUMN).to_pylist(), dtype=np.int64)
    views = question_views(table, task, columns.exposed, n_choices)
    if probe is SurfaceProbe.FILE_BYTES:
        def file(v: QuestionView, c: str, k: int) -> str | None:  # a null path (e.g. no STEP) reads as missing
            rel = v.per_choice[c][k] if c in v.per_choice else v.scalars.get(c)
            return rel or None

        if LAYOUT[task] is Layout.CANDIDATES:
            x = [[np.concatenate([byte_features(file(v, c, k), out) for c in columns.choice_files])
                  for k in range(n_choices)] for v in views]
        else:
            x = [np.concatenate([byte_features(file(v, c, 0), out) for c in columns.choice_files]) for v in views]
        return np.asarray(x, dtype=np.float64).reshape((len(views), d) if LAYOUT[task] is Layout.CLASSES
                                                        else (len(views), n_choices, d)), answers
    if probe is SurfaceProbe.PATHS:
        rows = [choice_tokens(v, task, own=is_path_column, match=lambda c: True) for v in views]
    elif probe is SurfaceProbe.METADATA:
        rows = [choice_tokens(v, task, own=lambda c: not is_path_column(c), match=lambda c: not is_path_column(c))
                for v in views]
    else:
        rows = [order_tokens(v, task, i, columns.paths, listing) for i, v in enumerate(views)]
    x = np.empty((len(rows), n_choices), dtype=object)
    for i, row in enumerate(rows):
        for k, toks in enumerate(row):
            x[i, k] = toks
    return x, answers


def empty_splits(out: Path, tasks, splits) -> list[str]:
    """``task/split`` of every split without questions (no file, or a file with no rows)."""
    empty = []
    for task in tasks:
        for split in splits:
            path = split_path(out, task.value, split)
            if not path.is_file() or pq.read_metadata(path).num_rows == 0:
                empty.append(f"{task.value}/{split}")
    return empty
