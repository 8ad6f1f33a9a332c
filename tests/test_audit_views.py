"""View-aware probes: where the views decide the answer, a learner seeing them beats the same learner blind to them;
with the answers shuffled it does not; the result reaches reports/audit.json, the card and the summary line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from synthetic_dataset import make_dataset

from spare_gen.atomic import write_json
from spare_gen.audit.learnability import FEATURE_NAMES, drawing_features, grouped_folds, view_aware, view_aware_task
from spare_gen.audit.probes import MULTIPLE_CHOICE
from spare_gen.audit.report import AuditReport
from spare_gen.audit.text import summary, warnings
from spare_gen.card.compose import write_audit_section
from spare_gen.jobs.stages import audit_line
from spare_gen.config.schema import TaskName
from spare_gen.rng import derive_rng
from spare_gen.stages.questions.schema import split_path
from spare_gen.stages.questions.tasks import SPLITS

SIZES = {"train": 48, "val": 6, "test": 6}  # 60 questions a task
TASK = TaskName.ISOMETRIC_TO_POSE


@pytest.fixture(scope="module")
def decided(tmp_path_factory) -> Path:
    """A dataset in the real layout whose views decide the answer (the choices alone tell nothing)."""
    return make_dataset(tmp_path_factory.mktemp("decided") / "out", split_sizes=SIZES, views_decide=True)


@pytest.fixture(scope="module")
def audited(decided) -> tuple[Path, str]:
    """``decided`` after the run's audit step (reports/audit.json and the card's section): (dataset, its line)."""
    line = audit_line(decided, 0)
    write_audit_section(decided, AuditReport.read(decided / "reports" / "audit.json"))
    return decided, line


def _shuffled_copy(src: Path, dest: Path, task: TaskName) -> Path:
    """A copy of ``src`` whose ``task`` answers are permuted among its questions (a wrong label per question)."""
    shutil.copytree(src, dest, symlinks=True)
    for split in SPLITS:
        path = split_path(dest, task.value, split)
        table = pq.read_table(path)
        answers = derive_rng(7, "test", "shuffle", split).permutation(table.column("answer").to_numpy())
        index = table.schema.get_field_index("answer")
        pq.write_table(table.set_column(index, table.schema.field(index), pa.array(answers, pa.int32())), path)
    return dest


def test_a_drawing_is_reduced_to_its_named_features_by_hand():
    from io import BytesIO

    from PIL import Image

    image = Image.new("L", (64, 64), 255)
    image.paste(0, (0, 0, 32, 32))  # the top-left quadrant inked
    buf = BytesIO()
    image.save(buf, format="PNG")
    f = dict(zip(FEATURE_NAMES, drawing_features(buf.getvalue())))
    assert len(FEATURE_NAMES) == 29
    assert f["ink"] == pytest.approx(0.25) and f["quadrant_tl"] == pytest.approx(1.0)
    assert (f["centroid_x"], f["centroid_y"]) == (pytest.approx(0.25), pytest.approx(0.25))
    assert (f["bbox_left"], f["bbox_top"], f["bbox_right"], f["bbox_bottom"]) == (0.0, 0.0, 0.5, 0.5)
    assert sum(f[f"edges_{k}"] for k in range(8)) == pytest.approx(1.0)


def test_grouped_folds_keep_a_model_on_one_side_and_balance_the_folds():
    groups = np.array([f"m{i // 3}" for i in range(30)] + [f"s{i}" for i in range(20)], dtype=object)
    fold = grouped_folds(groups, 5, derive_rng(0, "test", "folds"))
    for g in set(groups):
        assert len(set(fold[groups == g])) == 1
    assert np.bincount(fold).tolist() == [10] * 5


def test_views_beat_blind_where_they_decide_the_answer_and_the_audit_reports_it(audited):
    decided, line = audited
    report = AuditReport.read(decided / "reports" / "audit.json")
    by = {r["task"]: r for r in report.view_aware["results"]}
    assert set(by) == {"three_view_to_isometric", "isometric_to_pose", "pose_to_isometric"}
    for r in by.values():
        assert r["questions"] == 60 and r["views_above_blind"], r
        # the choices alone tell nothing: blind stays near chance (60 questions: within about 12 points)
        assert r["views"]["ci95"][0] > 0.8 and r["blind"]["accuracy"] < 0.45 and r["blind"]["ci95"][0] < 0.31
        assert r["difference"]["ci95"][0] > 0.4
        # the control: with the answers shuffled, views fall to blind
        assert r["shuffled"]["difference"]["ci95"][0] < 0 < r["shuffled"]["difference"]["ci95"][1]
        assert r["shuffled"]["views"]["ci95"][1] < r["views"]["ci95"][0]
    card = (decided / "README.md").read_text()
    assert "View-aware probes (gradient-boosted trees on 29 features of each 64 x 64 drawing" in card
    assert f"isometric_to_pose: views {100 * by['isometric_to_pose']['views']['accuracy']:.1f}%" in card
    assert line.startswith("audit: WARNING: " + summary(report))
    assert "views beat blind on 3 of 3 tasks (view-aware probes); TOO LITTLE DATA for the view-aware probes: " \
           "3 task(s)" in line
    # 60 questions a task: too little data, said once with its count
    assert "WARNING: 3 task(s) with too little data for the view-aware probes (fewer than 500 questions), " \
           "e.g. three_view_to_isometric with 60" in line
    assert sum("view-aware" in w for w in warnings(report)) == 1


def test_views_fall_to_blind_when_the_answers_are_shuffled(decided, tmp_path):
    shuffled = _shuffled_copy(decided, tmp_path / "shuffled", TASK)
    r = view_aware_task(shuffled, TASK, 0)
    assert not r["views_above_blind"], r
    assert r["difference"]["ci95"][0] < 0 < r["difference"]["ci95"][1]
    assert r["views"]["ci95"][0] < 0.25 < r["views"]["ci95"][1]
    assert view_aware_task(decided, TASK, 0)["views_above_blind"]  # the same task with its own answers


def test_two_runs_of_the_view_aware_probes_write_the_same_bytes(audited, tmp_path):
    decided = audited[0]
    first = json.loads((decided / "reports" / "audit.json").read_text())["view_aware"]
    again = view_aware(decided, [t for t in TaskName if t in MULTIPLE_CHOICE], 0)
    assert write_json(tmp_path / "a.json", first).read_bytes() == write_json(tmp_path / "b.json", again).read_bytes()


def test_questions_without_their_views_are_not_audited_and_the_summary_says_so(audited, tmp_path):
    decided = audited[0]
    copy = tmp_path / "no_views"
    shutil.copytree(decided, copy, symlinks=True)
    path = split_path(copy, TASK.value, "train")
    table = pq.read_table(path)
    index = table.schema.get_field_index("front_png")
    pq.write_table(table.set_column(index, table.schema.field(index), pa.nulls(len(table), pa.string())), path)
    r = view_aware_task(copy, TASK, 0)
    assert r == {"task": TASK.value, "not_audited": "48 of 60 questions without their F, R, T drawings"}
    report = AuditReport.read(decided / "reports" / "audit.json")
    report.view_aware["results"] = [r if x["task"] == TASK.value else x for x in report.view_aware["results"]]
    assert "view-aware NOT AUDITED: isometric_to_pose" in summary(report)
