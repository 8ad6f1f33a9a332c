"""Question columns every task shares (and the field helper each task module declares its own columns with)."""

from __future__ import annotations

import pyarrow as pa

PATHS = "paths relative to the dataset root"
# Column names and prefixes that loaders read by role; a drawing column is <prefix>_svg / <prefix>_png.
THREE_VIEW_PREFIXES = {"f": "front", "r": "right", "t": "top"}  # the F, R, T inputs, in channel order
ISO_PREFIX = "iso"  # isometric_to_pose: the isometric drawing whose pose is asked
TARGET_PREFIX = "target"  # isometric_view_generation: the drawing to generate
CANDIDATE_PREFIX = "candidate"  # candidate_svg / candidate_png: lists of 4, in answer order
POSE_COLUMN = "pose"  # pose_to_isometric: the query pose 1..8
POINTS_COLUMN = "points"  # point_cloud_generation: (n, 3) float32 target
ANSWER_COLUMN = "answer"


def field(name: str, typ: pa.DataType, doc: str) -> pa.Field:
    """A Parquet field with its description (shown in the dataset card)."""
    return pa.field(name, typ, metadata={"description": doc})


COMMON_FIELDS = [
    field("question_id", pa.string(), "unique id: <task>-<split>-<index>"),
    field("task", pa.string(), "task name"),
    field("split", pa.string(), "train, val or test"),
    field("model_id", pa.string(), "the model (row of models.parquet) the question is made from"),
    field("n_primitives", pa.int32(), "primitives in the CSG model (difficulty stratum); null for file models"),
    field("seed", pa.uint64(), "derive_seed(config seed, 'questions', task, model_id): the question's own randomness"),
    field("front_svg", pa.string(), f"input F drawing, SVG ({PATHS})"),
    field("front_png", pa.string(), "input F drawing, PNG"),
    field("right_svg", pa.string(), "input R drawing, SVG"),
    field("right_png", pa.string(), "input R drawing, PNG"),
    field("top_svg", pa.string(), "input T drawing, SVG"),
    field("top_png", pa.string(), "input T drawing, PNG"),
]

CANDIDATE_FIELDS = [
    field("candidate_svg", pa.list_(pa.string()), "the 4 candidate isometric drawings, SVG, in answer order"),
    field("candidate_png", pa.list_(pa.string()), "the 4 candidate isometric drawings, PNG, in answer order"),
]
ANSWER_FIELD = field(ANSWER_COLUMN, pa.int32(), "index (0-3) of the correct candidate / pose choice")
