"""The quiz in a real browser (Debian chromium + chromedriver through Selenium), both of SPARE3D's protocols end to
end with real keys and clicks: untrained (no feedback), trained (the right answer shown after each training
question, the test's time limit enforced), a reload that resumes, the answers stored; screenshots of every page."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.annotate_server import TOKEN, free_port, kill, start_server
from tests.test_quiz import answer_of
from spare_gen.quiz.plan import answers_path, plan_path, read_plan

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
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
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
    WebDriverWait(driver, timeout).until(lambda d: body(d).get_attribute("data-mode") in modes)
    return body(driver).get_attribute("data-mode")


def position(driver) -> int:
    return int(body(driver).get_attribute("data-position"))


def enter(driver) -> None:
    body(driver).send_keys(Keys.ENTER)


def shown_size(driver, css: str) -> tuple[int, int]:
    element = driver.find_elements(By.CSS_SELECTOR, css)[0]
    return element.size["width"], element.size["height"]


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
        assert browser.current_url == f"http://127.0.0.1:{port}/?person=p01"  # the token went into the cookie
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
            if k == 1:  # a reload in the middle: the person resumes at the question they were on
                browser.refresh()
                wait_mode(browser, "instructions")
                assert "Welcome back: 1 of 3 questions answered" in browser.page_source
                enter(browser)
                wait_mode(browser, "intro")
                enter(browser)
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
                if wrong == right:
                    assert feedback.startswith("Right.")
                else:
                    assert f"the answer is {right + 1}" in feedback and "wrong" in buttons[wrong].get_attribute("class")
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
