"""The rater web app in a real browser (Debian chromium + chromedriver through Selenium): a rater with a planted
preference rates a small pool with the keyboard, the server is killed mid-session and restarted, the rater
continues where they stopped, and `spare-gen rank` on the answers folder recovers the planted preference."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.annotate_server import TOKEN, call, free_port, kill, start_server
from tests.conftest import spare_gen_cli
from spare_gen.annotate.plan import plan_path, read_plan

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2}
RATER = "tester"
BREAK_EVERY = 20
# nothing on the page or in its JSON may name a corruption's type or severity
REVEALING = re.compile(r"\b(deform|perturb|remove|add|low|medium|high|severity|kind)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("annotate_pool") / "out"
    result = spare_gen_cli("pool", "--out", str(out), "--workers", "1", "--no-progress",
                           "--set", "models.csg.count=12", "--set", "pool.models=2",
                           "--set", "pool.max_pairs_per_model=24", "--set", "runner.dashboard=false")  # fmt: skip
    assert result.returncode == 0, result.stderr
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


def wait_mode(driver, *modes: str, timeout: float = 60) -> str:
    def mode(d) -> str:
        return d.find_element(By.TAG_NAME, "body").get_attribute("data-mode")

    WebDriverWait(driver, timeout).until(lambda d: mode(d) in modes)
    return mode(driver)


def position(driver) -> str:
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-position")


def planted(left_severity: str, right_severity: str) -> str:
    """The planted rater: the less severe corruption is closer; the same severity is equal."""
    a, b = SEVERITY_RANK[left_severity], SEVERITY_RANK[right_severity]
    return "left" if a < b else "right" if b < a else "equal"


KEY_OF = {"left": Keys.ARROW_LEFT, "right": Keys.ARROW_RIGHT, "equal": Keys.ARROW_DOWN}


def rate(driver, steps, pairs, severity, shots: Path, stop_after: int | None = None) -> int:
    """Answer pairs with the keyboard until done (or ``stop_after`` answers in this call); returns answers given."""
    given = 0
    while stop_after is None or given < stop_after:
        mode = wait_mode(driver, "rating", "break", "done")
        if mode == "done":
            return given
        if mode == "break":
            if not (shots / "03_break.png").exists():
                driver.save_screenshot(str(shots / "03_break.png"))
            driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
            wait_mode(driver, "rating")
        at = position(driver)
        step = steps[int(at)]
        pair = pairs.loc[step.pair_id]
        shown = (pair.right_id, pair.left_id) if step.shown_swapped else (pair.left_id, pair.right_id)
        driver.find_element(By.TAG_NAME, "body").send_keys(KEY_OF[planted(severity[shown[0]], severity[shown[1]])])
        WebDriverWait(driver, 60).until(lambda d: position(d) != at)
        given += 1
    return given


def test_rater_rates_with_keyboard_survives_a_server_kill_and_rank_recovers_the_preference(pool, browser, tmp_path):
    shots = tmp_path / "screenshots"
    shots.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}/?rater={RATER}"
    pairs = pd.read_parquet(pool / "pairs.parquet").set_index("pair_id")
    columns = ["corruption_id", "kind", "severity", "overlay_png"]
    variants = pd.read_parquet(pool / "corruptions.parquet", columns=columns)
    severity = dict(zip(variants["corruption_id"], variants["severity"]))
    answers = pool / "annotations" / f"{RATER}.csv"

    server = start_server(pool, port, "--break-every", str(BREAK_EVERY))
    try:
        browser.get(f"http://127.0.0.1:{port}/?token={TOKEN}")  # the printed URL, no ?rater=: the page asks for a name
        assert wait_mode(browser, "name") == "name"
        browser.save_screenshot(str(shots / "00_name.png"))
        browser.find_element(By.ID, "name-input").send_keys(RATER, Keys.ENTER)
        assert wait_mode(browser, "instructions") == "instructions" and browser.current_url == url
        browser.save_screenshot(str(shots / "01_instructions.png"))
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
        wait_mode(browser, "rating")
        assert position(browser) == "0"
        browser.save_screenshot(str(shots / "02_first_pair.png"))
        # one drag on a candidate turns all three views together; R brings back the home view
        pixels = "return ['view-gt', 'view-left', 'view-right'].map(id => document.getElementById(id).toDataURL())"
        home = browser.execute_script(pixels)
        canvas = browser.find_element(By.ID, "view-left")
        ActionChains(browser).move_to_element(canvas).click_and_hold().move_by_offset(90, 40).release().perform()
        turned = browser.execute_script(pixels)
        assert all(a != b for a, b in zip(home, turned))
        browser.save_screenshot(str(shots / "02b_rotated.png"))
        browser.find_element(By.TAG_NAME, "body").send_keys("r")
        assert browser.execute_script(pixels) == home

        steps, settings, _ = read_plan(plan_path(pool, RATER))
        assert settings.break_every == BREAK_EVERY and any(s.is_repeat for s in steps)
        # the page and the JSON behind it never name a type, a severity, a variant id or a picture file
        status, state = call(port, f"/api/state?rater={RATER}")
        state = json.dumps(state)
        assert status == 200
        for text in (browser.page_source, state):
            assert not REVEALING.search(text), REVEALING.search(text).group(0)
            assert not any(v in text for v in variants["corruption_id"])
            assert not any(Path(p).name in text for p in variants["overlay_png"].dropna())

        half = len(steps) // 2
        assert rate(browser, steps, pairs, severity, shots, stop_after=half) == half
    finally:
        kill(server)  # SIGKILL mid-session: nothing answered may be lost
    written = pd.read_csv(answers)
    assert len(written) == half and sorted(written["position"]) == list(range(half))

    server = start_server(pool, port, "--break-every", str(BREAK_EVERY))
    try:
        browser.get(url)
        wait_mode(browser, "instructions")
        assert position(browser) == str(half)  # continues where the rater stopped
        assert f"pair {half + 1} of {len(steps)}" in browser.find_element(By.ID, "progress").text
        browser.save_screenshot(str(shots / "04_resumed.png"))
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
        assert rate(browser, steps, pairs, severity, shots) == len(steps) - half
        wait_mode(browser, "done")
        browser.save_screenshot(str(shots / "05_done.png"))
    finally:
        kill(server)
    assert (shots / "03_break.png").is_file()

    written = pd.read_csv(answers, dtype={"pair_id": str})
    assert len(written) == len(steps) and list(written["position"]) == list(range(len(steps)))
    assert list(written["is_repeat"]) == [int(s.is_repeat) for s in steps]
    assert list(written["shown_swapped"]) == [int(s.shown_swapped) for s in steps]
    assert (written["response_ms"] >= 0).all() and pd.to_datetime(written["answered_at"], utc=True).notna().all()
    # choices are stored relative to the pair's stored sides, whatever side they were shown on
    stored = [planted(severity[pairs.loc[p, "left_id"]], severity[pairs.loc[p, "right_id"]])
              for p in written["pair_id"]]  # fmt: skip
    assert list(written["choice"]) == stored

    result = spare_gen_cli("rank", str(pool), str(pool / "annotations"))
    assert result.returncode == 0, result.stderr
    ranking = pd.read_parquet(pool / "reports" / "ranking.parquet").set_index("item")["bt_ability"]
    by_severity = {s: ranking[ranking.index.str.endswith("/" + s)] for s in SEVERITY_RANK}
    assert by_severity["low"].min() > by_severity["high"].max()
    assert by_severity["low"].mean() > by_severity["medium"].mean() > by_severity["high"].mean()
    reliability = pd.read_parquet(pool / "reports" / "rater_reliability.parquet").set_index("rater_id").loc[RATER]
    assert reliability["sanity_accuracy"] == 1.0
    assert reliability["n_repeat"] == sum(s.is_repeat for s in steps) and reliability["self_consistency"] == 1.0
    print("screenshots:", shots, json.dumps(sorted(p.name for p in shots.iterdir())))
