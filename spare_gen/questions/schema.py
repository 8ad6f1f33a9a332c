"""Schemas of the question Parquet files and the file manifest, declared once (with field descriptions)."""

from __future__ import annotations

import pyarrow as pa

from spare_gen.config.schema import TaskName

PATHS = "paths relative to the dataset root"


def _f(name: str, typ: pa.DataType, doc: str) -> pa.Field:
    return pa.field(name, typ, metadata={"description": doc})


COMMON_FIELDS = [
    _f("question_id", pa.string(), "unique id: <task>-<split>-<index>"),
    _f("task", pa.string(), "task name"),
    _f("split", pa.string(), "train, val or test"),
    _f("model_id", pa.string(), "the model (row of models.parquet) the question is made from"),
    _f("n_primitives", pa.int32(), "primitives in the CSG model (difficulty stratum); null for file models"),
    _f("seed", pa.uint64(), "derive_seed(config seed, 'questions', task, model_id): the question's own randomness"),
    _f("front_svg", pa.string(), f"input F drawing, SVG ({PATHS})"),
    _f("front_png", pa.string(), "input F drawing, PNG"),
    _f("right_svg", pa.string(), "input R drawing, SVG"),
    _f("right_png", pa.string(), "input R drawing, PNG"),
    _f("top_svg", pa.string(), "input T drawing, SVG"),
    _f("top_png", pa.string(), "input T drawing, PNG"),
]

_CANDIDATES = [
    _f("candidate_svg", pa.list_(pa.string()), "the 4 candidate isometric drawings, SVG, in answer order"),
    _f("candidate_png", pa.list_(pa.string()), "the 4 candidate isometric drawings, PNG, in answer order"),
]
_ANSWER = _f("answer", pa.int32(), "index (0-3) of the correct candidate / pose choice")

TASK_FIELDS: dict[TaskName, list[pa.Field]] = {
    TaskName.THREE_VIEW_TO_ISOMETRIC: [
        *_CANDIDATES,
        _ANSWER,
        _f("candidate_step", pa.list_(pa.string()), "STEP file of each candidate's cut object, in answer order"),
        _f("cutters", pa.string(), "JSON list of the cutting primitives (CSG primitive specs), in answer order"),
    ],
    TaskName.ISOMETRIC_TO_POSE: [
        _f("iso_svg", pa.string(), "input isometric drawing, SVG"),
        _f("iso_png", pa.string(), "input isometric drawing, PNG"),
        _f("choice_poses", pa.list_(pa.int32()), "the pose choices, always [1, 2, 5, 6]"),
        _ANSWER,
    ],
    TaskName.POSE_TO_ISOMETRIC: [
        _f("pose", pa.int32(), "input isometric pose (1-8)"),
        *_CANDIDATES,
        _ANSWER,
        _f("candidate_poses", pa.list_(pa.int32()), "pose of each candidate drawing, in answer order"),
    ],
    TaskName.ISOMETRIC_VIEW_GENERATION: [
        _f("target_svg", pa.string(), "target pose-2 isometric drawing, SVG"),
        _f("target_png", pa.string(), "target pose-2 isometric drawing, PNG"),
    ],
    TaskName.POINT_CLOUD_GENERATION: [
        _f("points", pa.list_(pa.list_(pa.float32(), 3)), "target point cloud, model coordinates, float32 (n, 3)"),
        _f("n_points", pa.int32(), "number of points"),
        _f("deflection", pa.float64(), "tessellation tolerance (model units) of the sampled surface"),
    ],
}


def question_schema(task: TaskName) -> pa.Schema:
    return pa.schema(COMMON_FIELDS + TASK_FIELDS[TaskName(task)])


# Per task: the columns holding file paths (single paths or lists of paths).
def path_columns(task: TaskName) -> list[str]:
    return [f.name for f in question_schema(task) if f.name.endswith(("_svg", "_png", "_step"))]


MANIFEST_SCHEMA = pa.schema([
    _f("path", pa.string(), f"a file referenced by some question ({PATHS})"),
    _f("sha256", pa.string(), "SHA-256 of the file's bytes"),
    _f("bytes", pa.int64(), "file size"),
])


POLYLINES = pa.list_(pa.list_(pa.list_(pa.float64())))

CUT_VIEWS_SCHEMA = pa.schema([
    _f("model_id", pa.string(), "the model that was cut"),
    _f("cut", pa.int32(), "cut object index 0-3 (0 provides the question's F, R, T and the correct answer)"),
    _f("view", pa.string(), "f, r, t or 2"),
    _f("svg", pa.string(), f"SVG drawing ({PATHS})"),
    _f("png", pa.string(), "PNG drawing"),
    _f("png_sha256", pa.string(), "SHA-256 of the PNG"),
    _f("hlr_method", pa.string(), "exact or poly"),
    _f("scale", pa.float64(), "canvas px per model unit: the cut model's own scale (drawings.parquet)"),
    _f("visible", POLYLINES, "visible polylines, canvas px"),
    _f("hidden", POLYLINES, "hidden polylines, canvas px"),
])


def describe(task: TaskName) -> list[tuple[str, str, str]]:
    """(name, type, description) of every column, for the dataset card."""
    return [(f.name, str(f.type), (f.metadata or {}).get(b"description", b"").decode()) for f in question_schema(task)]
