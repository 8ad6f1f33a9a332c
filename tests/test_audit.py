"""Bias audit: question-blind probes are within chance on fair data and flag a planted shortcut."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from synthetic_dataset import make_dataset

from spare_gen.audit import logit
from spare_gen.card.audit import BEGIN, END
from spare_gen.card.dataset import replace_marked
from spare_gen.audit.features import line_stats
from spare_gen.audit.probes import audit, judge
from spare_gen.audit.report import AuditReport
from spare_gen.cli import main as cli_main
from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.tasks import question_schema
from spare_gen.rng import derive_rng

MC_TASKS = ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric")
SPLITS = {"train": 40, "val": 4, "test": 24}


@pytest.fixture(scope="module")
def fair(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("fair") / "out", split_sizes=SPLITS)


@pytest.fixture(scope="module")
def biased(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("biased") / "out", split_sizes=SPLITS, biased=True)


def test_line_stats_by_hand():
    rgb = np.full((10, 10, 3), 255, np.uint8)
    rgb[0, :4] = 0  # 4 black pixels
    rgb[1, :2] = (255, 0, 0)  # 2 red pixels
    visible = [np.array([[0.0, 0.0], [3.0, 4.0]]), np.array([[1.0, 1.0], [1.0, 2.0]])]  # lengths 5 and 1
    hidden = [np.array([[0.0, 4.0], [2.0, 4.0]])]  # length 2
    s = dict(zip(["ink", "coloured", "dark", "nv", "nh", "hshare", "lv", "lh", "lshare", "extent", "aspect", "fill"],
                 line_stats(visible, hidden, rgb)))
    assert s["ink"] == pytest.approx(0.06) and s["coloured"] == pytest.approx(0.02)
    assert s["dark"] == pytest.approx((4 * 3 * 255 + 2 * 2 * 255) / (300 * 255))
    assert (s["nv"], s["nh"], s["hshare"]) == (2, 1, pytest.approx(1 / 3))
    assert (s["lv"], s["lh"], s["lshare"]) == (pytest.approx(6.0), pytest.approx(2.0), pytest.approx(0.25))
    assert s["extent"] == pytest.approx(0.4)  # bbox 3 x 4 px on a 10 px canvas
    assert s["aspect"] == pytest.approx(np.log(4 / 5)) and s["fill"] == pytest.approx(0.12)


def test_conditional_logit_learns_a_planted_rule_and_not_noise():
    rng = derive_rng(0, "test", "logit")
    x = rng.standard_normal((200, 4, 3))
    y = np.argmax(x[:, :, 1], axis=1)  # the answer is the candidate with the largest feature 1
    w = logit.fit(x[:100], y[:100], 1e-3)
    assert np.argmax(np.abs(w)) == 1 and w[1] > 0
    assert (logit.predict(x[100:], w) == y[100:]).mean() == 1.0
    noise = rng.integers(0, 4, 200)
    acc = (logit.predict(x[100:], logit.fit(x[:100], noise[:100], 1.0)) == noise[100:]).mean()
    assert acc < 0.4  # 100 fair questions: 40% is more than 3 standard errors above 25%
    folds = logit.stratified_folds(np.repeat(np.arange(4), 10), 5, rng)
    assert np.bincount(folds).tolist() == [8] * 5
    for label in range(4):
        assert np.bincount(folds[label * 10:(label + 1) * 10], minlength=5).tolist() == [2] * 5


def test_verdicts_use_bonferroni_wilson_intervals():
    results = [{"task": "t", "probe": p, "chance": 0.25,
                "evaluations": {"test": {"correct": c, "total": 10}, "cv": None}}
               for p, c in (("a", 10), ("b", 2), ("c", 0), ("d", 5))]
    level = judge(results)
    assert level == pytest.approx(1 - 0.05 / 4)
    # 10/10: Wilson lower bound n / (n + z^2), z = the 1 - 0.0125 / 2 normal quantile (98.75% two-sided)
    z2 = 2.4977054744 ** 2
    assert results[0]["evaluations"]["test"]["ci_family"][0] == pytest.approx(10 / (10 + z2), abs=1e-6)
    assert results[2]["evaluations"]["test"]["ci_family"][1] == pytest.approx(z2 / (10 + z2), abs=1e-6)  # 0/10
    assert [r["verdict"] for r in results] == ["above_chance", "within_chance", "within_chance", "within_chance"]
    results.append({"task": "t", "probe": "e", "chance": 0.25, "evaluations": {"test": None, "cv": None}})
    judge(results)
    assert results[-1]["verdict"] == "not_audited"  # nothing ran: never "within chance"


def test_every_probe_is_within_chance_on_fair_data(fair):
    report = audit(fair, seed=0)
    assert {r["task"] for r in report.results} == set(MC_TASKS)
    assert len(report.results) == 21 and report.flagged == [] and report.not_audited == []
    for r in report.results:
        assert r["verdict"] == "within_chance", r
        assert r["evaluations"]["test"]["total"] == 24
        if r["probe"] != "answer_position":
            assert r["evaluations"]["cv"]["total"] == 68
    assert report.per_evaluation_confidence == pytest.approx(1 - 0.05 / 39)  # 3 tasks x (6 x 2 + 1)
    assert audit(fair, seed=0) == report  # seeded: the same report again


def test_a_planted_shortcut_is_flagged(biased, capsys):
    (biased / "README.md").write_text("# Card\n\nSome text.\n")
    assert cli_main(["audit", str(biased), "--seed", "1"]) == 1
    captured = capsys.readouterr()
    assert "WARNING: three_view_to_isometric/line_stats (test) picks the answer" in captured.err
    report = AuditReport.read(biased / "reports" / "audit.json")
    by = {(r["task"], r["probe"]): r for r in report.results}
    for task in MC_TASKS:  # more visible lines / more hidden lines give the answer away
        assert by[(task, "line_stats")]["verdict"] == "above_chance"
        assert by[(task, "line_stats")]["evaluations"]["test"]["accuracy"] >= 0.8
        assert by[(task, "answer_position")]["verdict"] == "within_chance"
    card = (biased / "README.md").read_text()
    assert card.startswith("# Card\n\nSome text.\n\n" + BEGIN) and "## Bias audit" in card
    assert "Not within chance: `three_view_to_isometric/line_stats`" in card
    assert "at a family-wise 95% level (99.87% per evaluation, Bonferroni)" in card  # 3 x (6 x 2 + 1) evaluations
    assert cli_main(["audit", str(biased), "--seed", "1"]) == 1  # a rerun replaces the section
    card_again = (biased / "README.md").read_text()
    assert card_again.count(BEGIN) == 1 and card_again.count(END) == 1 and card_again == card


def test_probe_inputs_read_and_fitted_on_dask_workers_give_the_same_report(biased, monkeypatch):
    from spare_gen.audit import probes
    from spare_gen.runner.cluster import open_client

    here = audit(biased, seed=1)
    assert here.flagged  # a report with findings, not only "within chance"
    assert max(n for r in here.results for n in r["n"].values()) > 3  # splits of more than one part
    with open_client(workers=2, dashboard=False, quiet=True) as client:
        assert audit(biased, seed=1, client=client) == here
        monkeypatch.setattr(probes, "AUDIT_ROWS_PER_TASK", 3)  # every split's drawings read 3 questions a task
        assert audit(biased, seed=1, client=client) == here


def test_card_section_replacement():
    section = f"{BEGIN}\nnew\n{END}"
    assert replace_marked("", BEGIN, END, section) == section + "\n"
    text = f"# T\n\n{BEGIN}\nold\n{END}\n\n## Later\n"
    assert replace_marked(text, BEGIN, END, section) == f"# T\n\n{section}\n\n## Later\n"


def test_audit_errors_without_questions(tmp_path, capsys):
    assert cli_main(["audit", str(tmp_path)]) == 2
    assert "no multiple-choice question sets" in capsys.readouterr().err


# ---- the default config's real dataset --------------------------------------------------------------------


PIXEL_PROBES = ("line_stats", "pixels_16", "answer_position")


def test_real_dataset_pixels_are_within_chance(small_dataset, tmp_path):
    """Pixel probes are within chance; every probe runs (the path probes' verdict is the naming's business)."""
    card = (small_dataset / "README.md").read_text()  # the main job audits and records it in the card
    assert "## Bias audit" in card
    copy = tmp_path / "copy"  # write the reports and card section into a copy, not the shared dataset
    copy.mkdir()
    (copy / "questions").symlink_to(small_dataset / "questions")
    (copy / "drawings").symlink_to(small_dataset / "drawings")
    (copy / "views.parquet").symlink_to(small_dataset / "views.parquet")
    assert cli_main(["audit", str(copy)]) in (0, 1)
    report = AuditReport.read(copy / "reports" / "audit.json")
    assert [r["verdict"] for r in report.results if r["probe"] in PIXEL_PROBES] == ["within_chance"] * 9
    assert report.not_audited == [] and len(report.results) == 21
    for r in report.results:
        if r["probe"] != "answer_position":  # cross-validation covers every question of the task
            n_questions = sum(pq.read_metadata(p).num_rows for p in (small_dataset / "questions" / r["task"]).glob("*.parquet"))
            assert r["evaluations"]["cv"]["total"] == n_questions > 0


def real_drawing_questions(dataset, dest, answer_rule, n_train=40, n_test=24):
    """three_view_to_isometric questions over the real isometric drawings, answers set by ``answer_rule``."""
    views = pq.read_table(dataset / "views.parquet", columns=["model_id", "view", "svg", "png", "ink_fraction"])
    rows = [r for r in views.to_pylist() if r["view"] in {"1", "2", "3", "4", "5", "6", "7", "8"}]
    order = derive_rng(0, "test", "real-questions").permutation(len(rows))
    groups = [[rows[i] for i in order[4 * q:4 * q + 4]] for q in range(n_train + n_test)]
    dest.mkdir()
    (dest / "drawings").symlink_to(dataset / "drawings")
    (dest / "views.parquet").symlink_to(dataset / "views.parquet")
    schema = question_schema(TaskName.THREE_VIEW_TO_ISOMETRIC)
    for split, qs in (("train", groups[:n_train]), ("test", groups[n_train:])):
        recs = [{"question_id": f"q-{split}-{i}", "task": "three_view_to_isometric", "split": split,
                 "model_id": g[0]["model_id"], "candidate_svg": [c["svg"] for c in g],
                 "candidate_png": [c["png"] for c in g], "answer": answer_rule(i, g)} for i, g in enumerate(qs)]
        (dest / "questions" / "three_view_to_isometric").mkdir(parents=True, exist_ok=True)
        table = pa.table({f.name: [r.get(f.name) for r in recs] for f in schema}, schema=schema)
        pq.write_table(table, dest / "questions" / "three_view_to_isometric" / f"{split}.parquet")
    return dest


def test_real_drawings_with_the_most_ink_as_answer_are_flagged(small_dataset, tmp_path):
    most_ink = real_drawing_questions(small_dataset, tmp_path / "ink",
                                      lambda i, g: int(np.argmax([c["ink_fraction"] for c in g])))
    report = audit(most_ink)
    by = {r["probe"]: r for r in report.results}
    assert by["line_stats"]["verdict"] == "above_chance"
    assert by["line_stats"]["evaluations"]["test"]["accuracy"] >= 0.75
    # the same drawings with answers that ignore them stay within chance
    answers = derive_rng(0, "test", "fair-answers").permutation(np.arange(64) % 4)
    fair = real_drawing_questions(small_dataset, tmp_path / "fair", lambda i, g: int(answers[i]))
    assert [r["verdict"] for r in audit(fair).results] == ["within_chance"] * 7
    # answers that follow the row order (i % 4) are a shortcut the file_order probe finds
    by_row = {r["probe"]: r["verdict"] for r in audit(real_drawing_questions(
        small_dataset, tmp_path / "rows", lambda i, g: i % 4)).results}
    assert by_row["file_order"] == "above_chance" and by_row["line_stats"] == "within_chance"


def test_an_audit_on_too_few_questions_says_so_instead_of_within_chance():
    from spare_gen.audit.text import finding, summary, too_little_data, warnings

    def result(task, total, ci):
        e = {"verdict": "within_chance", "correct": total // 4, "total": total, "accuracy": 0.25, "ci_family": ci}
        return {"task": task, "probe": "line_stats", "chance": 0.25, "verdict": "within_chance",
                "evaluations": {"test": e, "cv": None}}

    report = AuditReport(seed=0, family_confidence=0.95, per_evaluation_confidence=0.99, confidence=0.95, min_train=8,
                         cv_folds=5, results=[result("three_view_to_isometric", 4, [0.0, 0.72]),
                                              result("isometric_to_pose", 2000, [0.22, 0.28])])
    wide = too_little_data(report)
    assert len(wide) == 1 and wide[0].startswith("three_view_to_isometric/line_stats (test) rests on 4 questions")
    assert "[0.0%, 72.0%]" in wide[0] and "+-15 points" in wide[0]
    assert warnings(report) == [f"1 evaluation(s) on too little data, e.g. {wide[0]}: see reports/audit.json"]
    assert "TOO LITTLE DATA: 1 evaluation(s)" in summary(report)
    # the card's sentence says it too, with the widest interval, never a bare "within chance"
    assert finding(report) == ("2 of 2 probes ran and are within chance; 1 evaluation(s) rest on too little data to "
                               "tell a shortcut from chance (a family interval wider than +-15 points); the widest "
                               "is [0.0% - 72.0%] (three_view_to_isometric/line_stats (test), 4 questions).")
    report.results.pop(0)
    assert finding(report) == ("1 of 1 probes ran and are within chance; every family interval is within +-15 "
                               "points; the widest is [22.0% - 28.0%] (isometric_to_pose/line_stats (test), 2000 "
                               "questions).")
