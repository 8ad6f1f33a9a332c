"""The quiz in a real browser (Debian chromium + chromedriver through Selenium), both of SPARE3D's protocols end to
end with real keys and clicks: untrained (no feedback), trained (the right answer shown after each training
question, named as its button names it; the test's time limit enforced from the drawings' showing, a reload showing
the time left), consent recorded or declined with nothing stored, withdrawal, counterbalanced task orders, a reload
that resumes, the answers stored; screenshots of every page at 1280 x 900."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.annotate_server import TOKEN, free_port, kill, start_server
from tests.conftest import spare_gen_cli
from tests.test_quiz import answer_of
from spare_gen.quiz.plan import answers_path, consent_path, plan_path, read_plan

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
TIME_LIMIT_S = 4


@pytest.fixture
def dataset(quiz_dataset, tmp_path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(quiz_dataset, out)
    return out


@pytest.fixture
def browser():
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.fail("Debian chromium and chromium-driver are needed (.ci/run installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    # the page itself at 1280 x 900 (a window of that size has less: its bars take some)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    yield driver
    driver.quit()


@pytest.fixture
def shots(tmp_path) -> Path:
    """Where the screenshots go: $QUIZ_SCREENSHOTS if set (to look at them), else the test's folder."""
    folder = Path(os.environ.get("QUIZ_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def body(driver):
    return driver.find_element(By.TAG_NAME, "body")


def wait_mode(driver, *modes: str, timeout: float = 60) -> str:
    WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: body(d).get_attribute("data-mode") in modes)
    return body(driver).get_attribute("data-mode")


def position(driver) -> int:
    return int(body(driver).get_attribute("data-position"))


def enter(driver) -> None:
    body(driver).send_keys(Keys.ENTER)


def shown_size(driver, css: str) -> tuple[int, int]:
    element = driver.find_elements(By.CSS_SELECTOR, css)[0]
    return element.size["width"], element.size["height"]


def fits(driver, element_id: str) -> bool:
    """Whether the element is in the viewport without scrolling."""
    return driver.execute_script(f"const r = document.getElementById('{element_id}').getBoundingClientRect();"
                                 "return r.height > 0 && r.bottom <= window.innerHeight;")


def check_question_looks_right(driver) -> None:
    """The drawings loaded and are large: candidates 240 px or more (the paper's site shows them about that size),
    F, R, T 200 px or more; the pose cube, when there is one, 200 px or more with its eight numbered corners."""
    images = driver.find_elements(By.CSS_SELECTOR, "#question img")
    assert images and all(driver.execute_script("return arguments[0].naturalWidth", i) > 0 for i in images)
    assert min(shown_size(driver, "figure.view img")) >= 200
    if driver.find_elements(By.CSS_SELECTOR, "button.choice img"):
        assert min(shown_size(driver, "button.choice img")) >= 240
    cubes = driver.find_elements(By.CSS_SELECTOR, "figure.cube svg")
    if cubes:
        assert min(cubes[0].size.values()) >= 200
        labels = [t.text for t in cubes[0].find_elements(By.TAG_NAME, "text")]
        assert all(str(k) in labels for k in range(1, 9)) and {"F", "R", "T"} <= set(labels)


def test_untrained_people_answer_by_keys_and_clicks_without_feedback_and_resume_after_a_reload(dataset, browser,
                                                                                                  shots, tmp_path):
    consent = tmp_path / "consent.txt"
    consent.write_text("This study is run by the Example Lab.\n\nYour answers are stored under a code, not your name.")
    port = free_port()
    server = start_server(dataset, port, "--questions", "1", "--consent", str(consent), command="quiz")
    try:
        browser.get(f"http://127.0.0.1:{port}/?token={TOKEN}")
        wait_mode(browser, "name")
        browser.save_screenshot(str(shots / "untrained_00_name.png"))
        browser.find_element(By.ID, "name-input").send_keys("p01", Keys.ENTER)
        wait_mode(browser, "consent")
        assert "Example Lab" in browser.find_element(By.ID, "screen-body").text
        assert browser.current_url == f"http://127.0.0.1:{port}/?token={TOKEN}&person=p01"  # the link keeps working
        browser.save_screenshot(str(shots / "untrained_01_consent.png"))
        browser.find_element(By.ID, "continue").click()
        wait_mode(browser, "instructions")
        assert "1 question per task; the right answer is not shown" in browser.page_source
        browser.save_screenshot(str(shots / "untrained_02_instructions.png"))
        enter(browser)
        steps, _, _ = read_plan(plan_path(dataset, "untrained", "p01"))
        for k in range(len(steps)):
            mode = wait_mode(browser, "intro", "question")
            if mode == "intro":
                if k == 0:
                    browser.save_screenshot(str(shots / "untrained_03_intro.png"))
                enter(browser)
                wait_mode(browser, "question")
            assert position(browser) == k
            check_question_looks_right(browser)
            if k % 2 == 0:
                browser.save_screenshot(str(shots / f"untrained_04_question_{steps[k].task.value}.png"))
            if k == 1:  # a reload in the middle: the person is back at the question they were on, at once
                browser.refresh()
                wait_mode(browser, "question")
                assert position(browser) == 1
            if k % 2:
                browser.find_elements(By.CSS_SELECTOR, "#choices button")[1].click()
            else:
                body(browser).send_keys("3")
            WebDriverWait(browser, 60).until(
                lambda d: body(d).get_attribute("data-mode") in ("intro", "done")
                or (body(d).get_attribute("data-mode") == "question" and position(d) != k))
            assert not browser.find_element(By.ID, "feedback").is_displayed()  # untrained: no feedback, ever
        wait_mode(browser, "done")
        browser.save_screenshot(str(shots / "untrained_05_done.png"))
    finally:
        kill(server)
    written = pd.read_csv(answers_path(dataset, "untrained", "p01"))
    assert written["position"].tolist() == list(range(3)) and written["choice"].tolist() == [2, 1, 2]
    assert written["question_id"].tolist() == [s.question_id for s in steps]
    assert (written["timed_out"] == 0).all() and (written["response_ms"] > 0).all()


def test_trained_people_see_the_right_answer_in_training_and_the_time_limit_ends_a_test_question(dataset, browser,
                                                                                                   shots):
    port = free_port()
    server = start_server(dataset, port, "--protocol", "trained", "--questions", "1", "--training-questions", "1",
                          "--time-limit", str(TIME_LIMIT_S), command="quiz")
    key = answer_of(dataset)
    try:
        browser.get(f"http://127.0.0.1:{port}/?token={TOKEN}&person=t01")
        wait_mode(browser, "instructions")
        assert "First, training questions" in browser.page_source
        assert fits(browser, "continue")  # the whole page at 1280 x 900: Continue is in view without scrolling
        browser.save_screenshot(str(shots / "trained_00_instructions.png"))
        enter(browser)
        steps, _, _ = read_plan(plan_path(dataset, "trained", "t01"))
        assert [s.phase.value for s in steps] == ["training"] * 3 + ["test"] * 3
        for k, step in enumerate(steps):
            mode = wait_mode(browser, "intro", "question")
            if mode == "intro":
                text = browser.find_element(By.ID, "screen-body").text
                assert ("after each answer you see the right one" in text) == (step.phase.value == "training")
                if k in (0, 3):
                    browser.save_screenshot(str(shots / f"trained_01_intro_{step.phase.value}.png"))
                enter(browser)
                wait_mode(browser, "question")
            assert position(browser) == k
            check_question_looks_right(browser)
            right = key[step.question_id]
            if step.phase.value == "training":
                wrong = (right + 1) % 4 if k != 1 else right
                body(browser).send_keys(str(wrong + 1))
                wait_mode(browser, "feedback")
                buttons = browser.find_elements(By.CSS_SELECTOR, "#choices button")
                assert "right" in buttons[right].get_attribute("class")
                feedback = browser.find_element(By.ID, "feedback").text
                label = buttons[right].text.rsplit(" ", 1)[0]  # "candidate 2" or "pose 6", before its key
                if wrong == right:
                    assert feedback.startswith(f"Right: {label} (key {right + 1})")
                else:
                    assert f"the answer is {label} (key {right + 1})" in feedback
                    assert "wrong" in buttons[wrong].get_attribute("class")
                browser.save_screenshot(str(shots / f"trained_02_feedback_{step.task.value}.png"))
                enter(browser)
            elif k == 3:  # the timer counts down; at zero the question ends unanswered
                assert browser.find_element(By.ID, "timer").is_displayed()
                browser.save_screenshot(str(shots / "trained_03_timed_question.png"))
                wait_mode(browser, "timeout", timeout=TIME_LIMIT_S + 30)
                assert "counts as wrong" in browser.page_source
                browser.save_screenshot(str(shots / "trained_04_time_is_up.png"))
                enter(browser)
            else:
                browser.find_elements(By.CSS_SELECTOR, "#choices button")[right].click()
                WebDriverWait(browser, 60).until(
                    lambda d: body(d).get_attribute("data-mode") in ("intro", "done")
                    or (body(d).get_attribute("data-mode") == "question" and position(d) != k))
                assert not browser.find_element(By.ID, "feedback").is_displayed()  # no feedback in the test
        wait_mode(browser, "done")
        browser.save_screenshot(str(shots / "trained_05_done.png"))
    finally:
        kill(server)
    written = pd.read_csv(answers_path(dataset, "trained", "t01"), dtype={"choice": "Int64"})
    assert written["phase"].tolist() == ["training"] * 3 + ["test"] * 3
    assert written["timed_out"].tolist() == [0, 0, 0, 1, 0, 0] and pd.isna(written["choice"].iloc[3])
    assert written["response_ms"].iloc[3] >= 1000 * TIME_LIMIT_S - 300
    assert [int(c) for c in written["choice"].iloc[4:]] == [key[s.question_id] for s in steps[4:]]
    assert written["time_limit_s"].iloc[3:].tolist() == [TIME_LIMIT_S] * 3 and pd.isna(written["time_limit_s"][0])
    print("screenshots:", shots, json.dumps(sorted(p.name for p in shots.iterdir())))


def answered_rows(out: Path, protocol: str, person: str) -> pd.DataFrame:
    return pd.read_csv(answers_path(out, protocol, person), dtype={"choice": "Int64"})


def test_the_clock_starts_with_the_drawings_on_screen_and_a_reload_shows_the_time_left(dataset, browser, shots):
    """A person reads the instructions and an intro for 8.5 s under a 3 s limit, then answers at once: in time (the
    clock started with the drawings, not with the page). A reload 1.5 s into the next question goes straight back to
    it with the time left (at most 2 s), never a fresh 3 s, and the question ends 3 s after its first showing."""
    limit = 3
    port = free_port()
    server = start_server(dataset, port, "--protocol", "trained", "--training-questions", "0", "--questions", "1",
                          "--time-limit", str(limit), command="quiz")
    try:
        browser.get(f"http://127.0.0.1:{port}/?token={TOKEN}&person=c01")
        wait_mode(browser, "instructions")
        time.sleep(5.0)  # reading the instructions
        enter(browser)
        wait_mode(browser, "intro")
        time.sleep(3.5)  # reading the task's intro
        enter(browser)
        wait_mode(browser, "question")
        assert browser.find_element(By.ID, "timer").text == f"{limit} s"  # the whole limit, after 8.5 s of reading
        body(browser).send_keys("1")
        wait_mode(browser, "intro")
        enter(browser)
        wait_mode(browser, "question")
        assert position(browser) == 1
        time.sleep(1.5)
        browser.refresh()
        wait_mode(browser, "question")  # no instructions, no intro: the question's clock is running
        assert position(browser) == 1
        assert int(browser.find_element(By.ID, "timer").text.split()[0]) <= limit - 1
        browser.save_screenshot(str(shots / "clock_01_after_reload_time_left.png"))
        wait_mode(browser, "timeout", timeout=limit + 30)
        browser.save_screenshot(str(shots / "clock_02_time_is_up.png"))
    finally:
        kill(server)
    written = answered_rows(dataset, "trained", "c01")
    assert written["timed_out"].tolist() == [0, 1] and written["choice"].iloc[0] == 0
    assert written["response_ms"].iloc[0] < 1000 * limit  # the reading was not timed
    assert 1000 * limit - 300 <= written["response_ms"].iloc[1] <= 1000 * limit + 1500  # from the first showing


def test_feedback_names_the_pose_or_candidate_on_the_buttons_with_spare3ds_pose_choices(quiz_dataset_spare3d_poses,
                                                                                         tmp_path, browser, shots):
    out = tmp_path / "out"
    shutil.copytree(quiz_dataset_spare3d_poses, out)
    key = answer_of(out)
    port = free_port()
    server = start_server(out, port, "--protocol", "trained", "--training-questions", "1", "--questions", "1",
                          command="quiz")
    seen = {}
    try:
        browser.get(f"http://127.0.0.1:{port}/?token={TOKEN}&person=f01")
        wait_mode(browser, "instructions")
        enter(browser)
        steps, _, _ = read_plan(plan_path(out, "trained", "f01"))
        for k, step in enumerate(steps[:3]):  # one training question per task
            wait_mode(browser, "intro")
            enter(browser)
            wait_mode(browser, "question")
            right = key[step.question_id]
            wrong = (right + 1) % 4
            buttons = browser.find_elements(By.CSS_SELECTOR, "#choices button")
            labels = [b.text.rsplit(" ", 1)[0] for b in buttons]  # "pose 6 4" -> "pose 6"
            buttons[wrong].click()
            wait_mode(browser, "feedback")
            feedback = browser.find_element(By.ID, "feedback").text
            assert f"the answer is {labels[right]} (key {right + 1}); you chose {labels[wrong]} (key {wrong + 1})" \
                in feedback, (feedback, labels)
            seen[step.task.value] = labels
            browser.save_screenshot(str(shots / f"feedback_{step.task.value}.png"))
            other = next(i for i in range(4) if i not in (right, wrong))
            ActionChains(browser).move_to_element(buttons[other]).perform()
            hover = browser.execute_script("return getComputedStyle(arguments[0]).borderTopColor", buttons[other])
            assert hover != "rgb(31, 95, 209)"  # no hover border during the feedback: nothing to choose
            enter(browser)
    finally:
        kill(server)
    assert seen["isometric_to_pose"] != [f"pose {k}" for k in range(1, 5)]  # SPARE3D's poses are not the keys
    assert all(label.startswith("pose ") for label in seen["isometric_to_pose"])
    assert seen["three_view_to_isometric"] == [f"candidate {k}" for k in range(1, 5)]


def test_consent_is_recorded_a_decline_stores_nothing_orders_are_counterbalanced_and_a_person_can_withdraw(
        dataset, browser, shots, tmp_path):
    consent = tmp_path / "consent.txt"
    consent.write_text("This study is run by the Example Lab.\n\nYou may stop at any time.")
    digest = hashlib.sha256(consent.read_bytes()).hexdigest()
    port = free_port()
    server = start_server(dataset, port, "--questions", "1", "--consent", str(consent), command="quiz")
    try:
        browser.get(f"http://127.0.0.1:{port}/")  # no token: a page that says what to do, not raw JSON
        assert "needs its full link" in browser.find_element(By.TAG_NAME, "h1").text
        browser.save_screenshot(str(shots / "paperwork_00_no_token.png"))

        browser.get(f"http://127.0.0.1:{port}/?token={TOKEN}&person=d01")
        wait_mode(browser, "consent")
        browser.find_element(By.ID, "decline").click()
        wait_mode(browser, "declined")
        assert "Nothing about you was stored" in browser.page_source
        browser.save_screenshot(str(shots / "paperwork_01_declined.png"))
        assert not (dataset / "quiz").exists() or not [p for p in (dataset / "quiz").rglob("*") if p.is_file()]

        cookie = next(c for c in browser.get_cookies() if c["name"].startswith("spare_gen_token_"))
        assert cookie["expiry"] - time.time() > 7 * 24 * 3600  # outlives the browser session

        firsts = {}
        for person in ("a01", "a02"):
            browser.get(f"http://127.0.0.1:{port}/?token={TOKEN}")
            wait_mode(browser, "name")
            browser.find_element(By.ID, "name-input").send_keys(person, Keys.ENTER)
            wait_mode(browser, "consent")
            browser.save_screenshot(str(shots / "paperwork_02_consent.png"))
            browser.find_element(By.ID, "continue").click()  # "I agree"
            wait_mode(browser, "instructions")
            enter(browser)
            wait_mode(browser, "intro")
            firsts[person] = browser.find_element(By.CSS_SELECTOR, "#screen-body h2").text
            enter(browser)
            wait_mode(browser, "question")
            body(browser).send_keys("2")
            wait_mode(browser, "intro")
    finally:
        kill(server)
    plans = {p: json.loads(plan_path(dataset, "untrained", p).read_text()) for p in ("a01", "a02")}
    assert [plans[p]["task_order_row"] for p in ("a01", "a02")] == [0, 1]
    assert plans["a01"]["task_order"] != plans["a02"]["task_order"] and firsts["a01"] != firsts["a02"]
    for p in ("a01", "a02"):
        row = answered_rows(dataset, "untrained", p).iloc[0]
        assert row["consent_sha256"] == digest and row["consented_at"] == json.loads(
            consent_path(dataset, "untrained", p).read_text())["consented_at"]
        assert row["task"] == plans[p]["task_order"][0]
    assert not any("a01" in f.name or "a02" in f.name for f in (dataset / "quiz").rglob("*"))  # digests, not ids

    result = spare_gen_cli("quiz", str(dataset), "--withdraw", "a01", timeout=300)
    assert result.returncode == 0, result.stderr
    assert "withdrew 'a01': removed 4 file(s), 1 answer(s)" in result.stdout  # plan, answers, consent, showing
    assert str(answers_path(dataset, "untrained", "a01")) in result.stdout
    assert not answers_path(dataset, "untrained", "a01").exists()
    assert not plan_path(dataset, "untrained", "a01").exists()
    assert not consent_path(dataset, "untrained", "a01").exists() and answers_path(dataset, "untrained", "a02").exists()
    again = spare_gen_cli("quiz", str(dataset), "--withdraw", "a01", timeout=300)
    assert again.returncode == 0 and "nothing of 'a01'" in again.stdout
