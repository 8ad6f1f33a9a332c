"""Tables and file names of the question stage, declared once: shared columns, fixed tables, output paths.

Each task module declares its question row as a class on ``QuestionCommon`` (its own columns after the common
ones, each a ``spare_gen.rows.column``; the candidate and answer columns some tasks share are made here by
``candidate_drawings`` and ``answer_choice``); the full table of a task is
``spare_gen.stages.questions.tasks.question_schema``, the schema of that row.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pyarrow as pa

from spare_gen.rows import Row, arrow_fields, arrow_schema, column
from spare_gen.stage_table import QUESTIONS

PATHS = "paths relative to the dataset root"
# Column names and prefixes that loaders read by role; a drawing column is <prefix>_svg / <prefix>_png.
THREE_VIEW_PREFIXES = {"f": "front", "r": "right", "t": "top"}  # the F, R, T inputs, in channel order
ISO_PREFIX = "iso"  # isometric_to_pose: the isometric drawing whose pose is asked
TARGET_PREFIX = "target"  # isometric_view_generation: the drawing to generate
CANDIDATE_PREFIX = "candidate"  # candidate_svg / candidate_png: lists of 4, in answer order
POSE_COLUMN = "pose"  # pose_to_isometric: the query pose 1..8
POINTS_COLUMN = "points"  # point_cloud_generation: (n, 3) float32 target
ANSWER_COLUMN = "answer"
PATH_SUFFIXES = ("_svg", "_png", "_step")  # a column named <...><suffix> holds file paths (one, or a list)


@dataclass(frozen=True, kw_only=True)
class QuestionCommon(Row):
    """The columns every question table starts with; each task's ``build_row`` gives the drawings and its own
    columns."""

    question_id: str | None = column(pa.string(), "unique id: <task>-<split>-<index>")
    task: str | None = column(pa.string(), "task name")
    split: str | None = column(pa.string(), "train, val or test")
    model_id: str | None = column(pa.string(), "the model (row of models.parquet) the question is made from")
    n_primitives: int | None = column(pa.int32(),
                                      "primitives in the CSG model (difficulty stratum); null for file models")
    seed: int | None = column(pa.uint64(),
                              "derive_seed(config seed, 'questions', task, model_id): the question's own randomness")
    front_svg: str | None = column(pa.string(), f"input F drawing, SVG ({PATHS})")
    front_png: str | None = column(pa.string(), "input F drawing, PNG")
    right_svg: str | None = column(pa.string(), "input R drawing, SVG")
    right_png: str | None = column(pa.string(), "input R drawing, PNG")
    top_svg: str | None = column(pa.string(), "input T drawing, SVG")
    top_png: str | None = column(pa.string(), "input T drawing, PNG")

    # Typed access to the columns a reader names by role (a prefix the task's spec declares), in one place.
    def drawing(self, prefix: str, kind: str) -> Any:
        """The drawing column ``<prefix>_<kind>`` (``kind``: "svg" or "png"): one path, or the list of a candidate
        column; None where this task's row has no such column."""
        return getattr(self, f"{prefix}_{kind}", None)

    def three_views(self, kind: str) -> dict[str, str | None]:
        """View name (f, r, t, in channel order) -> the F, R, T input drawing of that ``kind``."""
        return {view: self.drawing(prefix, kind) for view, prefix in THREE_VIEW_PREFIXES.items()}

    def candidates(self, kind: str) -> list[str]:
        """The candidate drawings (``candidate_<kind>``) in answer order; [] for a task without candidates."""
        return list(self.drawing(CANDIDATE_PREFIX, kind) or [])

    def paths(self) -> list[str]:
        """Every file path the row names, in column order (its ``PATH_SUFFIXES`` columns, lists flattened)."""
        paths: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name) if f.name.endswith(PATH_SUFFIXES) else None
            if value is not None:
                paths.extend(value if isinstance(value, (list, tuple)) else [value])
        return paths

    def correct_answer(self) -> int | None:
        """The ``answer`` column (index of the correct choice); None for a generation task (its row has none)."""
        answer = getattr(self, ANSWER_COLUMN, None)
        return None if answer is None else int(answer)


COMMON_FIELDS = arrow_fields(QuestionCommon, described=True)  # for the column reference (docs)

CANDIDATE_COLUMNS = (f"{CANDIDATE_PREFIX}_svg", f"{CANDIDATE_PREFIX}_png")  # what candidate_drawings declares


def candidate_drawings(fmt: str) -> Any:
    """The column ``candidate_svg`` (``fmt`` "SVG") or ``candidate_png`` ("PNG") of a task with candidates."""
    return column(pa.list_(pa.string()), f"the 4 candidate isometric drawings, {fmt}, in answer order")


def answer_choice() -> Any:
    """The column ``answer`` (``ANSWER_COLUMN``) of a multiple-choice task."""
    return column(pa.int32(), "index (0-3) of the correct candidate / pose choice")


@dataclass(frozen=True, kw_only=True)
class ManifestRow(Row):
    """One row of questions/files.parquet: a file some question references."""

    path: str | None = column(pa.string(), f"a file referenced by some question ({PATHS})")
    sha256: str | None = column(pa.string(), "SHA-256 of the file's bytes")
    bytes: int | None = column(pa.int64(), "file size")


MANIFEST_SCHEMA = arrow_schema(ManifestRow, described=True)


POLYLINES = pa.list_(pa.list_(pa.list_(pa.float64())))


@dataclass(frozen=True, kw_only=True)
class CutViewRow(Row):
    """One row of questions/cut_views.parquet: one drawing of one cut object (the validator re-checks rule 3 on
    them)."""

    model_id: str | None = column(pa.string(), "the model that was cut")
    cut: int | None = column(pa.int32(),
                             "cut object index 0-3 (0 provides the question's F, R, T and the correct answer)")
    view: str | None = column(pa.string(), "f, r, t or 2")
    svg: str | None = column(pa.string(), f"SVG drawing ({PATHS})")
    png: str | None = column(pa.string(), "PNG drawing")
    png_sha256: str | None = column(pa.string(), "SHA-256 of the PNG")
    hlr_method: str | None = column(pa.string(), "exact or poly")
    scale: float | None = column(pa.float64(), "canvas px per model unit: the cut model's own scale (drawings.parquet)")
    visible: list | None = column(POLYLINES, "visible polylines, canvas px")
    hidden: list | None = column(POLYLINES, "hidden polylines, canvas px")


CUT_VIEWS_SCHEMA = arrow_schema(CutViewRow, described=True)
CUT_VIEW_DRAWING = tuple(CUT_VIEWS_SCHEMA.names[3:])  # what one drawing of a cut object gives (svg ... hidden)

@dataclass(frozen=True, kw_only=True)
class FileSourceRow(Row):
    """One row of questions/file_sources.parquet: a per-question file and the drawing it copies."""

    path: str | None = column(pa.string(), f"a per-question copy ({PATHS})")
    source: str | None = column(pa.string(), "the drawing-stage file it copies (its name says the pose)")


FILE_SOURCES_SCHEMA = arrow_schema(FileSourceRow, described=True)

# Output file and folder names (relative to the dataset root).
QUESTIONS_DIR = QUESTIONS.folder
MANIFEST_NAME = "files.parquet"
SUMMARY_NAME = "summary.json"
TIMINGS_NAME = "timings.json"
CUT_VIEWS_NAME = "cut_views.parquet"
CUTS_DIR = f"{QUESTIONS_DIR}/cuts"  # cut objects (STEP) and their drawings, one folder per model
# where cut-set units write them (resume state, like the unit files): only those a question uses are
# published to CUTS_DIR (spare_gen.stages.questions.publish.files.publish_staged)
STAGED_CUTS_DIR = ".units/cut_files"
PREVIEW_DIR = "preview"  # contact sheets <task>.png and their vector twins <task>.svg


Counts = dict[str, int]  # by split, by rule or by primitive count (the summary's keys are JSON text)


@dataclass(frozen=True)
class QuestionsSummary:
    """What ``questions/summary.json`` says that later readers use (the card, the run's line): requested, planned
    and produced questions per task (produced: per split), usable and needed models per primitive count, the
    rejections by rule, surplus models, the answer counts and primitive mix per task and split. The file is
    written as the question stage's plain record (``stage.outputs.summary``); ``read`` types it."""

    requested: dict[str, int]
    planned: dict[str, int]
    produced: dict[str, Counts]
    usable_models: Counts
    needed_models: Counts
    filtered_models: Counts
    rejected_models: dict[str, Counts]
    rejected_candidates: dict[str, Counts]
    surplus_models: dict[str, int]
    answers: dict[str, dict[str, list[int]]]
    primitive_mix: dict[str, dict[str, Counts]]

    @classmethod
    def from_record(cls, record: dict) -> "QuestionsSummary":
        """The summary of a record as the stage writes it (its other keys, the settings it was made with, left)."""
        return cls(**{f: record[f] for f in cls.__dataclass_fields__})

    @classmethod
    def read(cls, path: Path) -> "QuestionsSummary":
        return cls.from_record(json.loads(Path(path).read_text(encoding="utf-8")))


def split_path(out: Path, task: str, split: str) -> Path:
    """``<out>/questions/<task>/<split>.parquet``."""
    return Path(out) / QUESTIONS_DIR / task / f"{split}.parquet"


FILE_SOURCES_NAME = "file_sources.parquet"  # per-question file -> the drawing it copies


def question_files_dir(task: str) -> str:
    """Folder of a task's per-question file copies (content-named), relative to the dataset root."""
    return f"{QUESTIONS_DIR}/{task}/files"


# Content-named files (``spare_gen.stages.questions.publish.files``): no name or modification time tells the answer.
NAME_HEX = 32  # hex digits of the SHA-256 in a file name (128 bits)
FIXED_MTIME = 946684800  # 2000-01-01T00:00:00Z for every content-named file


def content_name(data: bytes, suffix: str, salt: str = "") -> str:
    """``<first NAME_HEX hex digits of SHA-256(salt + data)><suffix>``; a salt keeps equal drawings of two
    views apart (it must never depend on the answer)."""
    return hashlib.sha256(salt.encode() + data).hexdigest()[:NAME_HEX] + suffix


def settle(path: Path) -> None:
    """Give ``path`` the fixed modification time."""
    os.utime(path, (FIXED_MTIME, FIXED_MTIME))
