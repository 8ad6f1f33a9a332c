"""Typed rows and the one stage list: a misspelt column is an error, not a null; no status is a string literal
compared or written outside the stage schemas; the stages `regenerate` runs are the list's, enabled by the config."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spare_gen.config import load_config
from spare_gen.stages.drawings.schema import DRAWINGS_SCHEMA, failed_rows
from spare_gen.cli.options import run as run_options
from spare_gen.stage_table import POOL_STAGES, STAGE_NAMES, STAGES, wanted
from spare_gen.store.inventory import MANAGED_DIRS
from spare_gen.stages.models.schema import MODELS_SCHEMA, ModelRow
from spare_gen.rows import rows_from_table
from spare_gen.runner.isolation import Status
from spare_gen.stages.pool.schema import CORRUPTIONS_SCHEMA, PICTURE_COLUMNS, WIREFRAMES_SCHEMA, CorruptionCore
from spare_gen.stages.questions.schema import ANSWER_COLUMN, CANDIDATE_COLUMNS, QuestionCommon
from spare_gen.stages.questions.tasks import TASKS, question_row, question_schema
from spare_gen.stages.questions.tasks.pose_to_isometric import PoseToIsometricRow
from spare_gen.store.shards import rows_to_table
from tests.conftest import REPO

STATUS_WORDS = "|".join(s.value for s in Status) + "|over_budget"
# a status word as a string literal next to a comparison, or as the value of a "status" key
STRING_STATUS = re.compile(rf'(==|!=)\s*"({STATUS_WORDS})"|"({STATUS_WORDS})"\s*(==|!=)|"status":\s*"({STATUS_WORDS})"')


def test_a_misspelt_column_is_an_error_not_a_null_column():
    with pytest.raises(TypeError, match="modle_id"):
        ModelRow(modle_id="csg_000000")


def test_a_typed_row_writes_its_status_as_the_enum_value(tmp_path):
    row = ModelRow(model_id="m", source="csg", status=Status.TIMEOUT, error="over budget", n_primitives=3)
    path = tmp_path / "models.parquet"
    pq.write_table(rows_to_table([row.as_dict()], MODELS_SCHEMA), path)
    back = pq.read_table(path)
    assert back.schema.equals(MODELS_SCHEMA)
    assert back.to_pylist()[0]["status"] == "timeout" and back.to_pylist()[0]["n_primitives"] == 3


def test_a_model_that_was_not_drawn_has_one_failed_row_per_expected_view():
    model, views = failed_rows("m", Status.CRASHED, "child process died", ["f", "r", "t"])
    table = rows_to_table([model.as_dict()], DRAWINGS_SCHEMA).to_pylist()[0]
    assert table["status"] == "crashed" and table["usable"] is False and table["duplicate"] is False
    assert [(v["view"], v["status"]) for v in views] == [("f", "crashed"), ("r", "crashed"), ("t", "crashed")]


def test_no_status_is_a_string_literal_outside_the_enums():
    found = []
    for path in sorted((REPO / "spare_gen").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if STRING_STATUS.search(line.split("#")[0]):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not found, "compare and write statuses as Status members:\n" + "\n".join(found)


def test_the_stages_run_are_the_listed_ones_the_config_enables():
    assert STAGE_NAMES == ("models", "drawings", "questions", "pool")
    everything = load_config(None, [])
    assert [s.name for s in wanted(everything, STAGE_NAMES)] == ["models", "drawings", "questions", "audit", "pool"]
    no_drawings = load_config(None, ["render.enabled=false", "pool.enabled=false"])
    assert [s.name for s in wanted(no_drawings, STAGE_NAMES)] == ["models"]
    assert [s.name for s in wanted(everything, ("pool", "models"))] == ["models", "pool"]  # list order, not asked order



def test_a_stage_is_named_once_and_the_help_the_store_and_the_stage_packages_read_it_from_the_table():
    from spare_gen.stages.drawings.render import DRAWINGS_DIR
    from spare_gen.stages.pool.schema import POOL_DIR
    from spare_gen.stages.questions.schema import QUESTIONS_DIR

    assert MANAGED_DIRS == ("models", "drawings", "questions", "pool") == tuple(s.folder for s in STAGES if s.folder)
    assert (DRAWINGS_DIR, QUESTIONS_DIR, POOL_DIR) == ("drawings", "questions", "pool")
    assert POOL_STAGES == ("models", "pool")
    parser = argparse.ArgumentParser()
    run_options.add_arguments(parser)
    stages = next(a for a in parser._actions if a.dest == "stages")
    assert stages.default == "models,drawings,questions,pool" and "four" not in stages.help
    assert all(f"{s.name} ({s.help})" in stages.help for s in STAGES if not s.follows), stages.help
    for stage in STAGES:  # every implementation the table names exists
        module, _, function = stage.runs.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), stage.runs


def test_a_table_reads_back_as_the_typed_rows_it_was_written_from(tmp_path):
    rows = [ModelRow(model_id="m0", source="csg", status=Status.OK, n_primitives=2, bbox_min=[0.0, 0.0, 0.0]),
            ModelRow(model_id="m1", source="file", status=Status.FAILED, error="no solid")]
    path = tmp_path / "models.parquet"
    pq.write_table(rows_to_table([r.as_dict() for r in rows], MODELS_SCHEMA), path)
    back = rows_from_table(ModelRow, pq.read_table(path))
    assert [(r.model_id, r.status, r.n_primitives, r.bbox_min, r.error) for r in back] == [
        ("m0", "ok", 2, [0.0, 0.0, 0.0], None), ("m1", "failed", None, None, "no solid")]
    with pytest.raises(TypeError, match="stray"):
        rows_from_table(ModelRow, pa.table({"model_id": ["m"], "stray": [1]}))


def test_the_wireframe_and_corruption_tables_declare_the_same_graph_columns():
    graph = ("vertices", "edges", "vertex_kinds", "n_vertices", "n_edges")
    assert [WIREFRAMES_SCHEMA.field(c) for c in graph] == [CORRUPTIONS_SCHEMA.field(c) for c in graph]
    assert CORRUPTIONS_SCHEMA.names[-len(PICTURE_COLUMNS):] == list(PICTURE_COLUMNS)
    assert [f.name for f in dataclasses.fields(CorruptionCore)] == CORRUPTIONS_SCHEMA.names[:12]


def test_every_question_table_is_its_task_row_and_the_shared_columns_read_alike_in_every_task():
    common = [f.name for f in dataclasses.fields(QuestionCommon)]
    shared: dict[str, list[pa.Field]] = {}
    for task in TASKS:
        schema = question_schema(task)
        assert issubclass(question_row(task), QuestionCommon) and schema.names[:len(common)] == common
        assert all((f.metadata or {}).get(b"description") for f in schema), f"{task.value}: a column lacks its doc"
        for name in (*CANDIDATE_COLUMNS, ANSWER_COLUMN):
            if name in schema.names:
                shared.setdefault(name, []).append(schema.field(name))
    assert sorted(shared) == sorted((*CANDIDATE_COLUMNS, ANSWER_COLUMN))
    for name, fields in shared.items():
        assert len(fields) > 1 and all(f.equals(fields[0], check_metadata=True) for f in fields), name


def test_a_question_table_reads_back_as_its_task_rows(tmp_path):
    row = PoseToIsometricRow(question_id="pose_to_isometric-train-0", task="pose_to_isometric", split="train",
                             model_id="m0", n_primitives=2, seed=7, pose=3, candidate_svg=["a.svg", "b.svg"],
                             candidate_png=["a.png", "b.png"], answer=1, candidate_poses=[3, 5])
    path = tmp_path / "train.parquet"
    pq.write_table(rows_to_table([row.as_dict()], question_schema("pose_to_isometric")), path)
    assert rows_from_table(question_row("pose_to_isometric"), pq.read_table(path)) == [row]
