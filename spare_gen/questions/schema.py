"""Schemas of the question Parquet files (common columns + each task's own), the file manifest and cut views."""

from __future__ import annotations

import pyarrow as pa

from spare_gen.config.schema import TaskName
from spare_gen.questions.columns import COMMON_FIELDS, PATHS, field
from spare_gen.questions.tasks import TASK_SPECS

TASK_FIELDS: dict[TaskName, list[pa.Field]] = {t: list(spec.fields) for t, spec in TASK_SPECS.items()}


def question_schema(task: TaskName) -> pa.Schema:
    return pa.schema(COMMON_FIELDS + TASK_FIELDS[TaskName(task)])


# Per task: the columns holding file paths (single paths or lists of paths).
def path_columns(task: TaskName) -> list[str]:
    return [f.name for f in question_schema(task) if f.name.endswith(("_svg", "_png", "_step"))]


MANIFEST_SCHEMA = pa.schema([
    field("path", pa.string(), f"a file referenced by some question ({PATHS})"),
    field("sha256", pa.string(), "SHA-256 of the file's bytes"),
    field("bytes", pa.int64(), "file size"),
])


POLYLINES = pa.list_(pa.list_(pa.list_(pa.float64())))

CUT_VIEWS_SCHEMA = pa.schema([
    field("model_id", pa.string(), "the model that was cut"),
    field("cut", pa.int32(), "cut object index 0-3 (0 provides the question's F, R, T and the correct answer)"),
    field("view", pa.string(), "f, r, t or 2"),
    field("svg", pa.string(), f"SVG drawing ({PATHS})"),
    field("png", pa.string(), "PNG drawing"),
    field("png_sha256", pa.string(), "SHA-256 of the PNG"),
    field("hlr_method", pa.string(), "exact or poly"),
    field("scale", pa.float64(), "canvas px per model unit: the cut model's own scale (drawings.parquet)"),
    field("visible", POLYLINES, "visible polylines, canvas px"),
    field("hidden", POLYLINES, "hidden polylines, canvas px"),
])


def describe(task: TaskName) -> list[tuple[str, str, str]]:
    """(name, type, description) of every column, for the dataset card."""
    return [(f.name, str(f.type), (f.metadata or {}).get(b"description", b"").decode()) for f in question_schema(task)]
