"""The question stage's client only decides: a unit sends back its decision, and the split writer, on a worker,
reads the unit's whole result from its unit file and publishes the cut files it names."""

from __future__ import annotations

import gzip
import json
import pickle
import random
from pathlib import Path

import pyarrow.parquet as pq

from spare_gen.atomic import write_parquet
from spare_gen.config import load_config
from spare_gen.config.schema import TaskName
from spare_gen.canvas.poses import ISOMETRIC_VIEWS
from spare_gen.stages.questions.row_parts import Accepted
from spare_gen.stages.questions.schema import (
    CUT_VIEWS_NAME, CUT_VIEWS_SCHEMA, CUTS_DIR, QUESTIONS_DIR, STAGED_CUTS_DIR, split_path,
)
from spare_gen.stages.questions.settings import DECISION, QuestionResult, stage_name
from spare_gen.stages.questions.assembly.inputs import WORKER_INPUTS, load_inputs, load_polylines
from spare_gen.stages.questions.tasks import TASK_SPECS, question_settings
from spare_gen.stages.questions.assembly.outputs import SplitOutput, _cut_views_table, plan_split, whole, write_rows, write_split
from spare_gen.runner.stage import load_units, loaded_fingerprints, read_unit_result, unit_dir, unit_fingerprints
from spare_gen.store.shards import rows_to_table

REPO = Path(__file__).resolve().parents[1]
WORKED = (TaskName.THREE_VIEW_TO_ISOMETRIC, TaskName.POSE_TO_ISOMETRIC, TaskName.POINT_CLOUD_GENERATION)


def _used_models(out, task: TaskName) -> list[str]:
    return sorted({m for split in ("train", "val", "test") if split_path(out, task.value, split).is_file()
                   for m in pq.read_table(split_path(out, task.value, split), columns=["model_id"])["model_id"]
                   .to_pylist()})


def test_a_question_unit_replies_only_its_decision_a_small_fraction_of_its_result(small_dataset):
    for task in WORKED:
        used = _used_models(small_dataset, task)
        assert used, task
        for mid in used[:5]:
            result = read_unit_result(small_dataset, stage_name(task), mid, QuestionResult)
            reply = result.timed(child_wall_s=1.0, steps_cpu_s={"cpu": 1.0}).decision()
            assert reply.accepted is True and reply.model_id == mid
            assert set(reply.own) <= set(DECISION) and reply.timings.steps_cpu_s == {"cpu": 1.0}
            assert len(pickle.dumps(reply)) < 1000, reply
            if task is not TaskName.POSE_TO_ISOMETRIC:  # cut sets with their drawings, point clouds: large
                assert 20 * len(pickle.dumps(reply)) < len(pickle.dumps(result)), (task, mid)


def test_the_split_writer_reads_the_whole_result_and_publishes_the_staged_cut_files(small_dataset):
    inputs = load_inputs(small_dataset)
    task = TaskName.THREE_VIEW_TO_ISOMETRIC
    for mid in _used_models(small_dataset, task)[:3]:
        stored = read_unit_result(small_dataset, stage_name(task), mid, QuestionResult)
        staged = [c["step"] for c in stored.own["cuts"]]
        assert all(p.startswith(f"{STAGED_CUTS_DIR}/") for p in staged), staged
        item = whole(small_dataset, task, Accepted(mid, inputs.strata[mid], stored.decision(), inputs.views[mid]))
        assert item.model_id == mid and item.views == inputs.views[mid]
        published = [c["step"] for c in item.result.own["cuts"]]
        assert published == [f"{CUTS_DIR}/{p.removeprefix(STAGED_CUTS_DIR + '/')}" for p in staged]
        assert all((small_dataset / p).is_file() for p in published)
        assert len(item.result.own["cuts"]) == len(stored.own["cuts"]) and item.result.rule == stored.rule
    # a task without per-model work keeps the item as it is: it has no unit files
    assert not unit_dir(small_dataset, stage_name(TaskName.ISOMETRIC_VIEW_GENERATION)).exists()
    item = Accepted("m", 2, QuestionResult(model_id="m", accepted=True), {})
    assert whole(small_dataset, TaskName.ISOMETRIC_VIEW_GENERATION, item) is item


def test_cut_views_merged_from_the_splits_arrow_tables_are_the_bytes_of_the_sorted_rows(small_dataset, tmp_path):
    rows = pq.read_table(small_dataset / QUESTIONS_DIR / CUT_VIEWS_NAME).to_pylist()
    assert len({r["model_id"] for r in rows}) > 3, "the small dataset has cut views of several models"
    # three splits' worth, each in its writer's order (not sorted), as the workers send them
    shuffled = random.Random(0).sample(rows, len(rows))
    parts = [shuffled[i::3] for i in range(3)]
    written = {TaskName.THREE_VIEW_TO_ISOMETRIC.value: {
        split: SplitOutput([], [], {}, rows_to_table(part, CUT_VIEWS_SCHEMA))
        for split, part in zip(("train", "val", "test"), parts)}}
    merged = _cut_views_table(written)
    by_rows = sorted([r for part in parts for r in part], key=lambda r: (r["model_id"], r["cut"], r["view"]))
    write_parquet(tmp_path / "arrow.parquet", merged)
    write_parquet(tmp_path / "rows.parquet", rows_to_table(by_rows, CUT_VIEWS_SCHEMA))
    assert (tmp_path / "arrow.parquet").read_bytes() == (tmp_path / "rows.parquet").read_bytes()
    assert merged.num_rows == len(rows)
    # no split with cut views (three-view questions not asked): the empty table, as before
    empty = _cut_views_table({TaskName.POSE_TO_ISOMETRIC.value: {"train": SplitOutput([], [], {}, rows_to_table(
        [], CUT_VIEWS_SCHEMA))}})
    assert empty.num_rows == 0 and empty.schema == CUT_VIEWS_SCHEMA


def _split_items(out, inputs, task: TaskName, split: str) -> list[Accepted]:
    """The split's items as the fill hands them to the writers: decisions only, in a shuffled order."""
    mids = pq.read_table(split_path(out, task.value, split), columns=["model_id"])["model_id"].to_pylist()
    items = [Accepted(m, inputs.strata[m], read_unit_result(out, stage_name(task), m, QuestionResult).decision()
                      if TASK_SPECS[task].run_unit else QuestionResult(model_id=m, accepted=True), inputs.views[m])
             for m in mids]
    return random.Random(1).sample(items, len(items))


def test_a_split_written_in_row_chunks_of_any_size_has_the_bytes_of_the_run_s_split(small_dataset, tmp_path):
    inputs = load_inputs(small_dataset)
    seed = load_config(REPO / "configs" / "default.toml").seed
    # three-view: cut views and published cut files; pose-to-isometric: extras from whole results (balanced poses)
    for task in (TaskName.THREE_VIEW_TO_ISOMETRIC, TaskName.POSE_TO_ISOMETRIC, TaskName.ISOMETRIC_VIEW_GENERATION):
        items = _split_items(small_dataset, inputs, task, "train")
        assert len(items) >= 4, task
        plan = plan_split(small_dataset, seed, task, "train", items, TASK_SPECS[task].n_answers)
        outputs = []
        for size in (1, 3, len(items)):
            chunks = [(start, plan[start:start + size]) for start in range(0, len(plan), size)]
            parts = [write_rows(small_dataset, seed, task, "train", start, [items[i] for i, _, _ in chunk],
                                [a for _, a, _ in chunk], [e for _, _, e in chunk]) for start, chunk in chunks]
            out = tmp_path / f"{task.value}-{size}"
            outputs.append(write_split(out, task, "train", *parts))
            assert split_path(out, task.value, "train").read_bytes() == \
                split_path(small_dataset, task.value, "train").read_bytes(), (task, size)
        first = outputs[-1]
        assert len(first.head) == 3 and len(first.questions) == len(items)
        assert bool(first.sources) == bool(TASK_SPECS[task].content_named_columns), task  # answer-side copies
        for other in outputs[:-1]:
            assert (other.questions, other.head, other.sources) == (first.questions, first.head, first.sources)
            assert other.cut_views.equals(first.cut_views)
        assert (first.cut_views.num_rows > 0) == (task is TaskName.THREE_VIEW_TO_ISOMETRIC)


def test_pose_units_read_their_polylines_on_a_worker_with_the_fingerprints_the_run_stored(small_dataset):
    config = load_config(REPO / "configs" / "default.toml", [f'out="{small_dataset}"'])
    for task in (TaskName.POSE_TO_ISOMETRIC, TaskName.ISOMETRIC_TO_POSE):
        expand = WORKER_INPUTS[TASK_SPECS[task].unit_inputs]
        done = sorted(p.name.removesuffix(".json.gz") for p in unit_dir(small_dataset, stage_name(task)).iterdir())
        assert len(done) >= 8, task
        units = [{"unit_id": m, "task": task.value, "model_id": m} for m in done]
        out_dir = str(small_dataset.resolve())
        stored = {m: json.loads(gzip.decompress((unit_dir(small_dataset, stage_name(task)) / f"{m}.json.gz")
                                                .read_bytes()))["unit_fingerprint"] for m in done}
        matched = set()
        for round_ in (1, 2, 3):  # a unit's round is part of its settings
            settings = question_settings(config, small_dataset, task, round_)
            loaded = load_units(expand, units, settings, out_dir)
            assert loaded_fingerprints(loaded) == loaded.fingerprints
            assert all(loaded.units[m]["views"] and set(loaded.units[m]["views"]) == set(ISOMETRIC_VIEWS)
                       for m in done)
            # what the client would have computed had it read the polylines itself
            polylines = load_polylines(small_dataset, done, ISOMETRIC_VIEWS)
            client_side = unit_fingerprints([{**u, "views": polylines[u["unit_id"]]} for u in units], settings,
                                            out_dir)
            assert loaded.fingerprints == client_side
            matched |= {m for m in done if stored[m] == client_side[m]}
        assert matched == set(done), task  # every unit file carries the fingerprint its worker computed
