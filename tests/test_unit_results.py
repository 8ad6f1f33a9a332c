"""A unit's result is its stage's typed class: stored records read back to the same bytes, and a unit the runner
fails still gives the rows its stage's tables need."""

from __future__ import annotations

import gzip
import json

import pytest

from drawings_shapes import render_config
from spare_gen.runner.isolation import Status
from spare_gen.runner.stage import FINGERPRINT_KEY, UNITS_DIR, run_unit
from spare_gen.stages.drawings.driver import TABLES
from spare_gen.stages.drawings.settings import DrawResult, DrawSettings
from spare_gen.stages.models.driver import MODELS_TABLE
from spare_gen.stages.models.settings import ModelResult, ModelSettings
from spare_gen.stages.pool.settings import CorruptionsResult, WireframeResult
from spare_gen.stages.questions.settings import QuestionResult
from spare_gen.store.shards import rows_to_table
from spare_gen.config.schema import CsgConfig

STORED = {"wireframes": WireframeResult, "corruptions": CorruptionsResult}  # and every questions_<task>


def test_every_stored_unit_record_reads_back_as_its_stage_s_result_and_writes_the_same_json(small_dataset):
    seen: dict[str, int] = {}
    for path in sorted((small_dataset / UNITS_DIR).glob("*/*.json.gz")):
        stage = path.parent.name
        result_type = QuestionResult if stage.startswith("questions_") else STORED[stage]
        record = json.loads(gzip.decompress(path.read_bytes()))
        record.pop(FINGERPRINT_KEY)
        result = result_type.from_record(record)
        assert result.record() == record, path
        assert json.dumps(result.record(), sort_keys=True) == json.dumps(record, sort_keys=True)
        seen[stage] = seen.get(stage, 0) + 1
    assert set(seen) >= {"wireframes", "corruptions", "questions_three_view_to_isometric",
                         "questions_isometric_to_pose", "questions_pose_to_isometric",
                         "questions_point_cloud_generation"}, seen


def test_a_question_result_keeps_the_keys_its_task_stated_and_its_decision_drops_the_bulk(small_dataset):
    records = [json.loads(gzip.decompress(p.read_bytes()))
               for p in sorted((small_dataset / UNITS_DIR / "questions_isometric_to_pose").glob("*.json.gz"))]
    stated_null = [r for r in records if "rule" in r and r["rule"] is None]
    assert stated_null, "isometric_to_pose states rule: null for an accepted model"
    result = QuestionResult.from_record({k: v for k, v in stated_null[0].items() if k != FINGERPRINT_KEY})
    assert result.accepted and result.rule is None and "rule" in result.record()
    decision = result.decision()
    assert "choice_poses" in result.own and "choice_poses" not in decision.own
    assert (decision.model_id, decision.accepted, decision.rule) == (result.model_id, True, None)


def _raises(unit, settings):
    raise RuntimeError("a bug in the task wrapper")


@pytest.mark.parametrize("settings, tables", [
    (ModelSettings(stage="models", seed=0, out_dir="/nonexistent", timeout_s=5, csg=CsgConfig()), (MODELS_TABLE,)),
    (DrawSettings(stage="drawings", seed=0, out_dir="/nonexistent", timeout_s=5, render=render_config()), TABLES),
], ids=["models", "drawings"])
def test_a_task_that_raises_is_its_stage_s_failed_result_with_rows_its_tables_take(settings, tables):
    result = run_unit(_raises, {"unit_id": "m1", "model_id": "m1"}, settings)
    assert isinstance(result, (ModelResult, DrawResult))
    assert (result.unit_id, result.status) == ("m1", Status.FAILED)
    assert result.error == "RuntimeError: a bug in the task wrapper"
    assert result.timings.task_wall_s is not None
    for table in tables:
        written = rows_to_table(table.rows(result), table.schema).to_pylist()
        assert written and all(r["model_id"] == "m1" and r["status"] == "failed" for r in written), table.name
