"""The rater web app without a browser: per-rater plans, the answers file, the answers reader, the real server's 4xx."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.annotate_server import TOKEN, call, free_port, kill, listening_addresses, start_server
from tests.conftest import REPO, spare_gen_cli
from spare_gen.annotate.plan import MIN_REPEAT_GAP, Settings, make_plan, plan_path, read_plan
from spare_gen.annotate.store import append_answer, read_positions, stored_choice
from spare_gen.atomic import write_parquet
from spare_gen.ranking.judgements import build_judgements, first_judgements
from spare_gen.rating.pairs import ANSWER_FILE_COLUMNS, Choice, make_pairs, pairs_to_arrow, read_answers

KINDS = ("deform", "perturb", "add", "remove")
SEVERITIES = ("low", "medium", "high")


def write_pool(out: Path, n_models: int = 3) -> pd.DataFrame:
    """pairs/corruptions/wireframes Parquet files of a hand-made pool (real pair maker, tiny geometry, real PNGs)."""
    rows = []
    for m, kind, severity in itertools.product(range(n_models), KINDS, SEVERITIES):
        cid = f"m{m}-{kind}-{severity}"
        png = f"pool/m{m}/{cid}_overlay.png"
        (out / png).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8), (255, 255, 255)).save(out / png)
        rows.append({"corruption_id": cid, "model_id": f"m{m}", "kind": kind, "severity": severity, "png": png,
                     "overlay_png": png, "vertices": [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.5, 0.1]],
                     "edges": [[0, 1]]})  # fmt: skip
    variants = pd.DataFrame(rows)
    pairs = make_pairs(variants, 3, repeat_fraction=0.05)
    write_parquet(out / "pairs.parquet", pairs_to_arrow(pairs))
    variants.drop(columns="png").to_parquet(out / "corruptions.parquet")
    truths = [{"model_id": f"m{m}", "vertices": [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]], "edges": [[0, 1]]}
              for m in range(n_models)]  # fmt: skip
    pd.DataFrame(truths).to_parquet(out / "wireframes.parquet")
    return pairs


@pytest.fixture
def pool(tmp_path) -> tuple[Path, pd.DataFrame]:
    return tmp_path, write_pool(tmp_path)


def test_plan_is_per_rater_deterministic_and_holds_every_regular_pair_once(pool):
    _, pairs = pool
    settings = Settings(sanity=5, repeat_fraction=0.2)
    ann = make_plan(pairs, 3, "ann", settings)
    assert ann == make_plan(pairs, 3, "ann", settings)
    assert ann != make_plan(pairs, 3, "bob", settings) and ann != make_plan(pairs, 4, "ann", settings)

    first = [s for s in ann if not s.is_repeat]
    kind = pairs.set_index("pair_id")["pair_type"]
    shown = [kind[s.pair_id] for s in first]
    regular = sorted(s.pair_id for s in first if kind[s.pair_id] == "regular")
    assert regular == sorted(pairs.loc[kind.values == "regular", "pair_id"])
    assert shown.count("sanity") == 5 and "repeat" not in shown  # pool repeats are replaced by per-rater ones
    assert len({s.pair_id for s in first}) == len(first)
    models = [pairs.set_index("pair_id").loc[s.pair_id, "model_id"] for s in first]
    assert len([m for m, _ in itertools.groupby(models)]) == 3  # one block per model
    assert 0.3 < np.mean([s.shown_swapped for s in first]) < 0.7

    repeats = [(i, s) for i, s in enumerate(ann) if s.is_repeat]
    assert len(repeats) == round(0.2 * len(first))
    swaps = []
    for i, step in repeats:
        j = next(k for k, s in enumerate(ann) if s.pair_id == step.pair_id and not s.is_repeat)
        assert i > j and (i - j > MIN_REPEAT_GAP or j >= len(ann) - len(repeats) - MIN_REPEAT_GAP - 1)  # room?
        swaps.append(step.shown_swapped != ann[j].shown_swapped)
    assert any(swaps) and not all(swaps)  # some repeats come back reversed, some not

    everything = make_plan(pairs, 3, "ann")  # defaults: 40 sanity pairs (the pool has 12), 5 % repeats
    assert sum(kind[s.pair_id] == "sanity" for s in everything if not s.is_repeat) == 12


def test_choice_maps_back_to_the_stored_sides():
    assert stored_choice(Choice.LEFT, False) is Choice.LEFT
    assert stored_choice(Choice.LEFT, True) is Choice.RIGHT
    assert stored_choice(Choice.RIGHT, True) is Choice.LEFT
    assert stored_choice(Choice.EQUAL, True) is Choice.EQUAL


def test_answers_file_appends_and_survives_a_cut_line(pool):
    out, pairs = pool
    path = out / "annotations" / "ann.csv"
    ids = pairs["pair_id"].tolist()
    for position, pair_id in enumerate(ids[:2]):
        append_answer(path, {"pair_id": pair_id, "rater_id": "ann", "choice": "left", "is_repeat": 0,
                             "shown_swapped": 1, "answered_at": "2026-01-01T00:00:00.000+00:00",
                             "response_ms": 900, "position": position})  # fmt: skip
    with open(path, "a") as fh:
        fh.write(f"{ids[2]},ann,ri")  # a crash in the middle of a line
    assert read_positions(path) == {0, 1}
    text = path.read_text()
    assert text.endswith("\n") and text.splitlines()[0] == ",".join(ANSWER_FILE_COLUMNS)
    got = read_answers(path, pairs)
    assert got["pair_id"].tolist() == ids[:2] and got["is_repeat"].tolist() == [0, 0]


def _csv(path: Path, rows: list[tuple]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "pair_id,rater_id,choice,is_repeat\n"
    path.write_text(header + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


def test_reader_takes_a_folder_keeps_repeats_in_judgements_and_out_of_the_ranking(pool):
    out, pairs = pool
    a, b = pairs["pair_id"].iloc[0], pairs["pair_id"].iloc[1]
    folder = out / "answers"
    _csv(folder / "ann.csv", [(a, "ann", "left", 0), (b, "ann", "equal", 0), (a, "ann", "right", 1)])
    (folder / "bob.csv").write_text(f"pair_id,rater_id,choice\n{a},bob,right\n")  # the optional columns may be absent
    (folder / "notes.txt").write_text("not an answers file")
    answers = read_answers(folder, pairs)
    assert sorted(map(tuple, answers[["rater_id", "pair_id", "is_repeat"]].values.tolist())) == [
        ("ann", a, 0), ("ann", a, 1), ("ann", b, 0), ("bob", a, 0)]  # fmt: skip
    table = build_judgements(pairs, answers[["pair_id", "rater_id", "choice", "is_repeat"]])
    assert "is_repeat" in table.columns and int(table["is_repeat"].sum()) == 1
    assert len(first_judgements(table)) == 3 and (first_judgements(table)["is_repeat"] == 0).all()

    _csv(folder / "carl.csv", [(a, "carl", "left", 2), (b, "carl", "left", 1)])
    with pytest.raises(ValueError) as error:
        read_answers(folder, pairs)
    message = str(error.value)
    assert "\n" not in message and "carl.csv" in message and "bad is_repeat ['2']" in message
    assert f"is_repeat=1 answers without a first answer for (pair_id, rater_id) [('{b}', 'carl')]" in message
    (folder / "carl.csv").unlink()
    _csv(folder / "zed.csv", [(b, "ann", "left", 0)])  # the same rater and pair in two files
    with pytest.raises(ValueError, match=r"files together\): repeated answers for \(pair_id, rater_id\)"):
        read_answers(folder, pairs)
    with pytest.raises(FileNotFoundError, match="has no \\*.csv files"):
        read_answers(out / "pool", pairs)


def test_server_answers_several_raters_maps_sides_back_and_rejects_bad_requests(pool):
    out, pairs = pool
    port = free_port()
    server = start_server(out, port, "--sanity", "3", "--break-every", "7")
    try:
        assert listening_addresses(port) == {"127.0.0.1"}  # loopback only unless --host says otherwise
        status, state = call(port, "/api/state?rater=ann")
        assert status == 200 and state["position"] == 0 and state["break_every"] == 7
        assert set(state["item"]) == {"position", "gt", "left", "right", "pictures"}
        status, picture = call(port, state["item"]["pictures"]["left"])
        assert status == 200 and picture.startswith(b"\x89PNG")

        steps, settings, _ = read_plan(plan_path(out, "ann"))
        assert settings == Settings(sanity=3, repeat_fraction=0.05, break_every=7)
        bob_steps = None
        for position in range(4):
            for rater in ("ann", "bob"):  # two raters at once, interleaved
                status, state = call(port, "/api/answer", {"rater": rater, "position": position, "choice": "left",
                                                           "response_ms": 1234.4})  # fmt: skip
                assert status == 200 and state["position"] == position + 1 and state["answered"] == position + 1
        bob_steps, _, _ = read_plan(plan_path(out, "bob"))
        assert [s.pair_id for s in bob_steps] != [s.pair_id for s in steps]

        bad = [
            ("/api/state?rater=../etc", None, 400, "rater name"),
            ("/api/state", None, 400, "rater name None"),
            ("/api/answer", b"{not json", 400, "must be JSON"),
            ("/api/answer", [1, 2], 400, "JSON object"),
            ("/api/answer", {"rater": "ann", "position": 4, "choice": "up", "response_ms": 5}, 400, "choice 'up'"),
            ("/api/answer", {"rater": "ann", "position": "4", "choice": "left", "response_ms": 5}, 400, "integer"),
            ("/api/answer", {"rater": "ann", "position": 4, "choice": "left", "response_ms": -1}, 400, "response_ms"),
            ("/api/answer", {"rater": "ann", "position": 3, "choice": "left", "response_ms": 5}, 409, "not the pair"),
            ("/api/picture?rater=ann&position=0&which=kind", None, 400, "which 'kind'"),
            ("/api/picture?rater=ann&position=x&which=left", None, 400, "position 'x'"),
        ]
        for path, body, code, reason in bad:
            status, reply = call(port, path, body)
            assert status == code and reason in reply["error"], (path, status, reply)
        assert call(port, "/api/answer")[0] == 405 and call(port, "/nowhere")[0] == 404

        short = json.loads(plan_path(out, "ann").read_text())  # a one-pair session, in the plan file's own format
        plan_path(out, "short").write_text(json.dumps({**short, "rater": "short", "steps": short["steps"][:1]}))
        answer = {"rater": "short", "position": 0, "choice": "equal", "response_ms": 10}
        status, state = call(port, "/api/answer", answer)
        assert status == 200 and state["done"] and state["item"] is None
        status, reply = call(port, "/api/answer", {**answer, "position": 1})
        assert status == 409 and "answered all 1 pairs" in reply["error"]

        taken = spare_gen_cli("annotate", str(out), "--port", str(port), timeout=120)  # the port is in use
        assert taken.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in taken.stderr
    finally:
        kill(server)

    for rater, plan in (("ann", steps), ("bob", bob_steps)):
        written = pd.read_csv(out / "annotations" / f"{rater}.csv", dtype={"pair_id": str})
        assert list(written.columns) == list(ANSWER_FILE_COLUMNS) and len(written) == 4  # the 4xx wrote nothing
        assert written["pair_id"].tolist() == [s.pair_id for s in plan[:4]]
        # "left" on screen is the stored right side when the pair was shown swapped
        assert written["choice"].tolist() == ["right" if s.shown_swapped else "left" for s in plan[:4]]
        assert written["response_ms"].tolist() == [1234] * 4 and set(written["rater_id"]) == {rater}


def test_cli_refuses_bad_input_with_one_line_and_exit_2(pool, tmp_path):
    out, _ = pool
    cases = [
        (["annotate", str(tmp_path / "nothing")], "annotate: error: folder"),
        (["annotate", str(out), "--rater", "no/slash"], "rater name 'no/slash' is not allowed"),
        (["annotate", str(out), "--repeat-fraction", "0.9"], "--repeat-fraction 0.9 must be within [0, 0.5]"),
        (["annotate", str(out), "--port", "70000"], "--port 70000 must be within 1..65535"),
        (["rank", str(out), str(tmp_path / "missing.csv")], "does not exist"),
    ]
    for args, message in cases:
        result = spare_gen_cli(*args, timeout=120)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_server_on_every_address_needs_its_printed_token_and_counts_pairs_as_the_page(pool):
    """``--host 0.0.0.0`` with no --token: a new token, carried by the printed URL; without it every request is 401."""
    out, pairs = pool
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "spare_gen.cli", "annotate", str(out), "--port", str(port),
                               "--host", "0.0.0.0", "--sanity", "3"], cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        printed = [server.stdout.readline() for _ in range(2)]
        url = re.search(r"open (http://\S+)", printed[1]).group(1)
        token = re.search(r"\?token=([A-Za-z0-9_-]+)$", url).group(1)
        assert len(token) >= 24 and url.startswith(f"http://0.0.0.0:{port}/?token=")
        deadline = time.monotonic() + 120
        while True:
            try:
                if call(port, "/api/config", token=token)[0] == 200:
                    break
            except urllib.error.URLError:  # not listening yet
                pass
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.3)
        for path, body in (("/", None), ("/api/config", None), ("/api/state?rater=ann", None),
                           ("/api/picture?rater=ann&position=0&which=left", None),
                           ("/api/answer", {"rater": "ann", "position": 0, "choice": "left", "response_ms": 5})):
            for wrong in (None, "not-the-token"):
                status, reply = call(port, path, body, token=wrong)
                assert status == 401 and "token" in reply["error"], (path, wrong, status)
        assert not (out / "annotations" / "ann.csv").exists()  # nobody without the token answered
        status, state = call(port, f"/api/state?rater=ann&token={token}", token=None)  # as the URL carries it
        assert status == 200
        # the page's own requests carry the token in the cookie the page was served with
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?token={token}", timeout=30) as page:
            cookie = page.headers["Set-Cookie"].split(";")[0]
        request = urllib.request.Request(f"http://127.0.0.1:{port}{state['item']['pictures']['left']}",
                                         headers={"Cookie": cookie})
        with urllib.request.urlopen(request, timeout=30) as picture:
            assert picture.read().startswith(b"\x89PNG")
        # the server's count is the page's: "pair 1 of <total>"
        assert f"each rater answers {state['total']} pairs" in printed[0], printed[0]
        steps, _, _ = read_plan(plan_path(out, "ann"))
        assert state["total"] == len(steps)
    finally:
        kill(server)


def test_every_malformed_request_gets_a_json_4xx_and_only_token_or_bearer_headers_count(pool):
    out, _ = pool
    port = free_port()
    server = start_server(out, port, "--sanity", "3")
    try:
        answer = {"rater": "ann", "position": 0, "choice": "left", "response_ms": 5}
        bad = [
            ("/api/answer", b"[" * 100_000 + b"]" * 100_000, 413, "over"),  # too big, and nested too deep
            ("/api/answer", b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}", 400, "must be JSON"),  # nested 5,000 deep
            ("/api/answer", {**answer, "choice": ["left"]}, 400, "choice ['left']"),
            ("/api/answer", {**answer, "position": int("9" * 4000)}, 409, "not the pair"),
            ("/api/answer", b'{"rater": "ann", "position": ' + b"9" * 5000 + b"}", 400, "must be JSON"),
            ("/api/answer", {**answer, "response_ms": float("nan")}, 400, "response_ms"),
            ("/api/answer", {**answer, "rater": "ann\n"}, 400, "rater name 'ann\\n'"),
            ("/api/state?rater=ann%0A", None, 400, "rater name 'ann\\n'"),
            ("/api/picture?rater=ann&position=%C2%B2&which=left", None, 400, "position '²'"),
            ("/api/picture?rater=ann&position=" + "7" * 5000 + "&which=left", None, 400, "must be an integer"),
        ]
        for path, body, code, reason in bad:
            status, reply = call(port, path, body)
            assert status == code and isinstance(reply, dict) and reason in reply["error"], (path[:60], status, reply)
        assert not (out / "annotations" / "ann\n.csv").exists()
        for header, code in ((f"token {TOKEN}", 200), (f"Bearer {TOKEN}", 200), (TOKEN, 401), (f"Basic {TOKEN}", 401)):
            request = urllib.request.Request(f"http://127.0.0.1:{port}/api/config", headers={"Authorization": header})
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    status = response.status
            except urllib.error.HTTPError as error:
                status = error.code
            assert status == code, (header, status)
    finally:
        kill(server)


def test_the_readme_rater_url_works_as_written(pool):
    out, _ = pool
    line = next(l for l in (REPO / "README.md").read_text().splitlines() if l.startswith("spare-gen annotate "))
    command, _, comment = line.partition("#")
    url = re.search(r"open (http://127\.0\.0\.1:8765/\S+)", comment).group(1)
    args = command.split()[3:]  # after "spare-gen annotate OUT"
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "spare_gen.cli", "annotate", str(out), "--port", str(port), *args],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url.replace(":8765/", f":{port}/"), timeout=30) as page:
                    assert page.status == 200 and b"<html" in page.read().lower()
                break
            except urllib.error.URLError as exc:  # not listening yet (a 401 would be an HTTPError: fail at once)
                assert not isinstance(exc, urllib.error.HTTPError), exc
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.3)
    finally:
        kill(server)
