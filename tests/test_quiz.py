"""The quiz without a browser, on a real small dataset: plans, the real server's answers and 4xx, path traversal, a
SIGKILL in the middle of a 20-person simulated study, dry runs, and the scoring's Wilson intervals against scipy."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import binomtest

from tests.annotate_server import TOKEN, call, free_port, kill, listening_addresses, start_server
from tests.conftest import spare_gen_cli
from spare_gen.baseline.figure6 import humans_markdown
from spare_gen.data.human_scores import ANSWER_COLUMNS, read_answers, score_answers
from spare_gen.data.stats import wilson
from spare_gen.data.tables import load_split
from spare_gen.quiz.bank import Bank
from spare_gen.quiz.plan import Phase, Protocol, Settings, answers_path, make_plan, plan_path, read_plan
from spare_gen.quiz.simulate import People, play, simulate

TASKS = ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric")


@pytest.fixture
def dataset(quiz_dataset, tmp_path) -> Path:
    """A copy of the session's quiz dataset, so each test's answers start from none."""
    out = tmp_path / "out"
    shutil.copytree(quiz_dataset, out)
    return out


def answer_of(out: Path) -> dict[str, int]:
    key = {}
    for task in TASKS:
        for split in ("train", "test"):
            t = load_split(out, task, split, columns=["question_id", "answer"])
            key.update(zip(t.column("question_id").to_pylist(), t.column("answer").to_pylist()))
    return key


def test_plans_follow_the_protocols_and_are_per_person_deterministic(quiz_dataset):
    bank = Bank(quiz_dataset)
    assert bank.tasks == tuple(TASKS)  # SPARE3D's order; the generation tasks are not asked
    assert [len(bank.ids(t, "train")) for t in bank.tasks] == [8] * 3 and [len(bank.ids(t, "test")) for t in
                                                                            bank.tasks] == [1] * 3
    untrained = make_plan(bank, 0, "ann", Settings(questions=2))  # one per task: the test split has one
    assert untrained == make_plan(bank, 0, "ann", Settings(questions=2))
    assert {s.phase for s in untrained} == {Phase.TEST} and [s.task.value for s in untrained] == list(TASKS)
    trained_ann = make_plan(bank, 0, "ann", Settings(protocol=Protocol.TRAINED, training_questions=8))
    assert trained_ann != make_plan(bank, 0, "bob", Settings(protocol=Protocol.TRAINED, training_questions=8))
    assert all(s.question_id in bank.ids(s.task, "test") for s in untrained)
    assert len({s.question_id for s in untrained}) == len(untrained)  # drawn without replacement

    trained = make_plan(bank, 0, "ann", Settings(protocol=Protocol.TRAINED, questions=2, training_questions=5))
    phases = [s.phase for s in trained]
    assert phases == [Phase.TRAINING] * 15 + [Phase.TEST] * 3  # training first, every task, then the test
    assert all(s.question_id in bank.ids(s.task, "train") for s in trained if s.phase is Phase.TRAINING)
    assert Settings().resolved().questions == 4 and Settings(protocol="trained").resolved().questions == 100


def test_server_stores_answers_resumes_and_refuses_bad_requests_with_json(dataset):
    port = free_port()
    server = start_server(dataset, port, "--protocol", "trained", "--questions", "2", "--training-questions", "2",
                          "--time-limit", "5", command="quiz")
    try:
        assert listening_addresses(port) == {"127.0.0.1"}
        status, config = call(port, "/api/config")
        assert status == 200 and config["protocol"] == "trained" and set(config["tasks"]) == set(TASKS)
        assert "<svg" in config["pose_cube"] and "Hidden lines are drawn in red" in \
            config["tasks"]["pose_to_isometric"]["instructions"]
        status, state = call(port, "/api/state?person=ann")
        assert status == 200 and state["training_total"] == 6 and state["test_total"] == 3
        item = state["item"]
        text = json.dumps(state)
        key = answer_of(dataset)
        assert '"answer"' not in text and ".png" not in text and ".svg" not in text and "question_id" not in text
        for url in [*item["views"].values(), *item["candidates"]]:
            status, picture = call(port, url)
            assert status == 200 and picture.lstrip().startswith(b"<?xml")  # the dataset's own SVG

        steps, _, _ = read_plan(plan_path(dataset, "trained", "ann"))
        first = key[steps[0].question_id]
        status, reply = call(port, "/api/answer", {"person": "ann", "position": 0, "choice": (first + 1) % 4,
                                                   "response_ms": 900})
        assert status == 200 and reply["feedback"] == {"position": 0, "answer": first, "choice": (first + 1) % 4,
                                                       "correct": False, "answer_label": f"candidate {first + 1}",
                                                       "choice_label": f"candidate {(first + 1) % 4 + 1}"}
        status, reply = call(port, "/api/answer", {"person": "ann", "position": 0, "choice": 1, "response_ms": 5})
        assert status == 409 and "not the question on screen" in reply["error"]  # a double key press: no second row

        traversal = ["/static/../../dataset.json", "/static/%2e%2e/%2e%2e/dataset.json",
                     "/static/..%2f..%2fdataset.json",
                     "/api/picture?person=ann&position=1&which=../../dataset.json",
                     "/api/picture?person=ann&position=1&which=%2Fetc%2Fpasswd", "/dataset.json",
                     "/questions/pose_to_isometric/test.parquet", "/api/picture?person=../ann&position=1&which=f"]
        for path in traversal:
            status, reply = call(port, path)
            assert 400 <= status < 500 and isinstance(reply, dict) and "error" in reply, (path, reply)
            assert "seed" not in json.dumps(reply), (path, reply)  # nothing of the dataset's files came back
        bad = [
            ("/api/state?person=..%2Fetc", None, 400, "person name"),
            ("/api/state", None, 400, "person name None"),
            ("/api/answer", b"{not json", 400, "must be JSON"),
            ("/api/answer", b"[" * 100_000 + b"]" * 100_000, 413, "over"),
            ("/api/answer", b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}", 400, "must be JSON"),
            ("/api/answer", [1], 400, "JSON object"),
            ("/api/answer", {"person": "ann", "position": 1, "choice": 7, "response_ms": 5}, 400, "within 0..3"),
            ("/api/answer", {"person": "ann", "position": 1, "choice": "2", "response_ms": 5}, 400, "integer"),
            ("/api/answer", {"person": "ann", "position": 1, "choice": True, "response_ms": 5}, 400, "integer"),
            ("/api/answer", {"person": "ann", "position": 1, "choice": None, "response_ms": 5}, 400, "time limit"),
            ("/api/answer", {"person": "ann", "position": 1, "choice": 1, "response_ms": float("nan")}, 400, "ms"),
            ("/api/answer", {"person": "ann", "position": 1, "choice": 1, "response_ms": -3}, 400, "ms"),
            ("/api/answer", {"person": "ann", "position": "1", "choice": 1, "response_ms": 3}, 400, "integer"),
            ("/api/answer", {"person": "ann", "position": 10 ** 40, "choice": 1, "response_ms": 3}, 409, "not the"),
            ("/api/answer", {"person": "ann\n", "position": 1, "choice": 1, "response_ms": 3}, 400, "person name"),
            ("/api/picture?person=ann&position=0&which=f", None, 409, "not the question on screen"),
            ("/api/picture?person=ann&position=%C2%B2&which=f", None, 400, "position"),
            ("/api/picture?person=ann&position=" + "7" * 5000 + "&which=f", None, 400, "integer"),
            ("/api/picture?person=ann&position=1&which=c9", None, 404, "no drawing"),
            ("/api/picture?person=ann&position=1&which=" + "x" * 50, None, 400, "must name"),
        ]
        for path, body, code, reason in bad:
            status, reply = call(port, path, body)
            assert status == code and isinstance(reply, dict) and reason in reply["error"], (path[:60], status, reply)
        assert call(port, "/api/answer")[0] == 405 and call(port, "/nowhere")[0] == 404
        assert call(port, "/api/state?person=ann", token=None)[0] == 401
        assert call(port, "/api/state?person=ann", token="wrong")[0] == 401
        assert call(port, "/api/consent", {"person": "ann", "consent_sha256": "x"})[0] == 409  # no --consent
    finally:
        kill(server)

    server = start_server(dataset, port, "--protocol", "trained", command="quiz")  # other defaults: the plan's win
    try:
        status, state = call(port, "/api/state?person=ann")
        assert status == 200 and state["position"] == 1 and state["answered"] == 1 and state["total"] == 9
        # a test question under the time limit: an answer after it is stored, as timed out
        for position in range(1, 6):
            step = read_plan(plan_path(dataset, "trained", "ann"))[0][position]
            assert call(port, "/api/state?person=ann")[0] == 200
            status, reply = call(port, "/api/answer", {"person": "ann", "position": position,
                                                       "choice": key[step.question_id], "response_ms": 700})
            assert status == 200 and reply["feedback"]["correct"]
        status, state = call(port, "/api/state?person=ann")
        assert state["item"]["phase"] == "test" and state["item"]["time_limit_s"] == 5
        assert state["item"]["time_left_s"] == 5 and not state["item"]["shown"]  # a state starts no clock
        status, reply = call(port, "/api/answer", {"person": "ann", "position": 6, "choice": 0, "response_ms": 90})
        assert status == 409 and "never shown" in reply["error"]  # a timed question's clock must have started
        status, shown = call(port, "/api/shown", {"person": "ann", "position": 6})
        assert status == 200 and shown["time_limit_s"] == 5 and 4 < shown["time_left_s"] <= 5
        time.sleep(0.5)
        status, again = call(port, "/api/shown", {"person": "ann", "position": 6})  # a reload: the clock goes on
        assert again["elapsed_s"] >= 0.5 and again["time_left_s"] <= 4.5
        # the page claims 6 s; the server saw 0.5 s: the time stored is the server's bound, and in time
        status, reply = call(port, "/api/answer", {"person": "ann", "position": 6, "choice": 0, "response_ms": 6000})
        assert status == 200 and not reply["stored"]["timed_out"] and "feedback" not in reply  # no feedback in a test
        call(port, "/api/shown", {"person": "ann", "position": 7})
        status, reply = call(port, "/api/answer", {"person": "ann", "position": 7, "choice": None, "response_ms": 5000})
        assert status == 200 and reply["stored"]["timed_out"]
    finally:
        kill(server)
    written = pd.read_csv(answers_path(dataset, "trained", "ann"), dtype={"choice": "Int64"})
    assert list(written.columns) == list(ANSWER_COLUMNS) and written["position"].tolist() == list(range(8))
    assert written["timed_out"].tolist() == [0] * 7 + [1] and pd.isna(written["choice"].iloc[7])
    assert 500 <= written["response_ms"].iloc[6] < 3000  # bounded by the server's clock, not the page's 6000
    assert written["phase"].tolist() == ["training"] * 6 + ["test"] * 2 and (written["time_limit_s"].iloc[6] == 5)


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")  # a person who gave up fails it
def test_a_sigkill_in_the_middle_of_a_20_person_study_loses_no_acknowledged_answer_and_stores_none_twice(dataset):
    port = free_port()
    url = f"http://127.0.0.1:{port}/?token={TOKEN}"
    people = People(count=20, accuracy=0.7, seconds=3, seed=4)
    acknowledged: list = []
    server = start_server(dataset, port, "--questions", "2", command="quiz")
    players = threading.Thread(target=play, args=(url, dataset, people), kwargs={"deadline_s": 240,
                                                                                 "acknowledged": acknowledged})
    players.start()
    deadline = time.monotonic() + 120
    while len(acknowledged) < 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    kill(server)  # SIGKILL while 20 people answer at once
    at_kill = list(acknowledged)
    assert 20 <= len(at_kill) < 60, len(at_kill)
    stored = read_answers(dataset / "quiz")
    keys = {(r["person_id"], r["position"]) for r in stored}
    assert set(at_kill) <= keys  # every acknowledged answer was on disk
    server = start_server(dataset, port, "--questions", "2", command="quiz")  # the people carry on
    try:
        players.join(240)
        assert not players.is_alive()
    finally:
        kill(server)
    rows = read_answers(dataset / "quiz")  # refuses an answer stored twice
    assert len(rows) == 20 * 3 == len({(r["person_id"], r["position"]) for r in rows})
    assert set(acknowledged) <= {(r["person_id"], r["position"]) for r in rows}
    for name in people.names():
        steps, _, _ = read_plan(plan_path(dataset, "untrained", name))
        mine = sorted((r for r in rows if r["person_id"] == name), key=lambda r: r["position"])
        assert [r["question_id"] for r in mine] == [s.question_id for s in steps]


def test_dry_runs_are_deterministic_and_score_near_the_chosen_accuracy(dataset, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(dataset, other)
    settings = Settings(protocol=Protocol.TRAINED, questions=2, training_questions=8, training_minutes=1,
                        time_limit_s=15)
    people = People(count=12, accuracy=0.75, seconds=10, seed=3)
    assert simulate(dataset, settings, people) == simulate(other, settings, people)
    for name in people.names():
        assert answers_path(dataset, "trained", name).read_bytes() == answers_path(other, "trained", name).read_bytes()
    orders = [tuple(json.loads(plan_path(dataset, "trained", n).read_text())["task_order"]) for n in people.names()]
    assert len(set(orders[:6])) == 6 and orders[6:12] == orders[:6]  # 12 people: each Williams row twice
    for position in range(3):  # each task first, second and third equally often
        assert pd.Series([o[position] for o in orders]).value_counts().tolist() == [4, 4, 4]
    rows = read_answers(dataset / "quiz")
    training = [r for r in rows if r["phase"] == "training"]
    # 1 training minute (20 s a task) at about 12 s a question: each task's training stops early
    per_task = pd.Series([(r["person_id"], r["task"]) for r in training]).value_counts()
    assert len(per_task) == 12 * 3 and (per_task < 8).all()  # every task trained on, none to the end
    assert len([r for r in rows if r["phase"] == "test"]) == 36
    assert any(r["timed_out"] for r in rows)  # log-normal times around 10 s: some pass the 15 s limit
    report, _ = score_answers(dataset, dataset / "quiz")
    in_time = [r for r in score_answers(dataset, dataset / "quiz")[1] if not r["timed_out"]]
    assert 0.6 < sum(r["correct"] for r in in_time) / len(in_time) < 0.9  # the chosen 0.75
    assert report["results"][0]["phase"] == "training" and report["results"][0]["seconds"]["median"] == \
        pytest.approx(10, rel=0.3)
    assert simulate(dataset, settings, people) == {n: 0 for n in people.names()}  # done already: nothing added


def test_evaluate_scores_people_with_wilson_intervals_equal_to_scipys(dataset):
    simulate(dataset, Settings(questions=2), People(count=9, accuracy=0.6, seconds=8, seed=1))
    simulate(dataset, Settings(protocol=Protocol.TRAINED, questions=2, training_questions=3),
             People(count=3, accuracy=0.9, seconds=5, seed=2, prefix="trainee"))
    result = spare_gen_cli("evaluate", str(dataset), str(dataset / "quiz"), timeout=300)
    assert result.returncode == 0, result.stderr
    assert "untrained test     pose_to_isometric" in result.stdout and "58.6 %" in result.stdout
    assert sum("person sim-" in line for line in result.stdout.splitlines()) == 9 * 3  # per-person rows too
    assert sum("person trainee-" in line for line in result.stdout.splitlines()) == 3 * 3 * 2  # training and test
    report = json.loads((dataset / "reports" / "humans.json").read_text())
    table = pd.read_csv(dataset / "reports" / "human_answers.csv")
    assert len(table) == report["n_answers"] == 9 * 3 + 3 * (9 + 3) and set(table["correct"]) <= {0, 1}
    key = answer_of(dataset)
    assert (table["answer"] == table["question_id"].map(key)).all()
    checked = 0
    for r in report["results"]:
        for acc in [r["pooled"], *r["per_person"]]:
            ci = binomtest(acc["correct"], acc["total"]).proportion_ci(confidence_level=0.95, method="wilson")
            assert acc["ci"] == pytest.approx([ci.low, ci.high], abs=1e-12), acc
            checked += 1
        group = table[(table["protocol"] == r["protocol"]) & (table["phase"] == r["phase"])
                      & (table["task"] == r["task"])]
        assert r["pooled"]["correct"] == group["correct"].sum() and r["people"] == group["person_id"].nunique()
        assert r["seconds"]["median"] == pytest.approx(group["response_ms"].median() / 1000)
        assert r["paper"] == ({"untrained": {"three_view_to_isometric": 0.805, "isometric_to_pose": 0.602,
                                             "pose_to_isometric": 0.586},
                               "trained": {"three_view_to_isometric": 0.94, "isometric_to_pose": 0.91,
                                           "pose_to_isometric": 0.65}}[r["protocol"]][r["task"]]
                              if r["phase"] == "test" else None)
    assert checked > 12
    figure6 = humans_markdown(report)  # the Figure 6 pipeline's table, people rows
    p2i = next(r for r in report["results"] if (r["protocol"], r["phase"], r["task"]) ==
               ("untrained", "test", "pose_to_isometric"))
    ours = wilson(p2i["pooled"]["correct"], p2i["pooled"]["total"])
    assert (f"| Pose to Isometric | - | people, untrained (9 people, best " in figure6
            and f"**{100 * ours.value:.1f} % [{100 * ours.low:.1f}, {100 * ours.high:.1f}]** | 9 |" in figure6)
    assert "| 58.6 % [53.7, 63.3], n 400: average of 100+ people" in figure6  # the paper's, at its n
    assert "| 3-View to Isometric | - | people, trained (3 people" in figure6
    assert "94.0 % [87.5, 97.2], n 100" in figure6
    card = (dataset / "README.md").read_text()
    assert "## Human performance" in card and figure6.strip() in card  # the card holds the same table

    withdrawn = spare_gen_cli("quiz", str(dataset), "--withdraw", "trainee-001", timeout=300)
    assert withdrawn.returncode == 0, withdrawn.stderr
    assert "withdrew 'trainee-001': removed 3 file(s), 12 answer(s)" in withdrawn.stdout  # plan, answers, showing
    assert "scoring" in withdrawn.stdout and "person trainee-001" not in withdrawn.stdout
    rescored = json.loads((dataset / "reports" / "humans.json").read_text())
    assert rescored["n_answers"] == report["n_answers"] - 12 and "trainee-001" not in json.dumps(rescored)
    assert "trainee-001" not in (dataset / "reports" / "human_answers.csv").read_text()

    path = answers_path(dataset, "untrained", "sim-000")
    path.write_text(path.read_text() + path.read_text().splitlines()[1] + "\n")  # the same answer twice
    twice = spare_gen_cli("evaluate", str(dataset), str(dataset / "quiz"), timeout=300)
    assert twice.returncode == 2 and "answers stored twice" in twice.stderr and "Traceback" not in twice.stderr


def test_cli_refuses_bad_input_with_one_line_and_exit_2(quiz_dataset, tmp_path):
    cases = [
        (["quiz", str(tmp_path / "nothing")], "quiz: error: folder"),
        (["quiz", str(quiz_dataset), "--person", "no/slash"], "person name 'no/slash' is not allowed"),
        (["quiz", str(quiz_dataset), "--time-limit", "0"], "--time-limit 0.0 must be within [1, 3600]"),
        (["quiz", str(quiz_dataset), "--tasks", "point_cloud_generation"], "is a generation task"),
        (["quiz", str(quiz_dataset), "--tasks", "nope"], "unknown task 'nope'"),
        (["quiz", str(quiz_dataset), "--port", "70000"], "--port 70000 must be within 1..65535"),
        (["quiz", str(quiz_dataset), "--consent", str(tmp_path / "none.html")], "--consent"),
        (["quiz", str(tmp_path), "--simulate", "2"], "does not exist (run `spare-gen run` first)"),
        (["quiz", str(quiz_dataset), "--simulate", "3", "--accuracy", "1.5"], "--accuracy 1.5 must be within"),
        (["evaluate", str(quiz_dataset), str(tmp_path / "p.csv")], "--task is required"),
    ]
    for args, message in cases:
        result = spare_gen_cli(*args, timeout=300)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
