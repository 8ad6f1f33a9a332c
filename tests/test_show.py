"""`spare-gen show`: a self-contained HTML page of sample questions, answers behind a toggle, pose cube for pose tasks."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from spare_gen.cli import main
from spare_gen.config.schema import TaskName
from spare_gen.canvas.pose_cube import pose_cube_svg


class Page(HTMLParser):
    """Collects the page's question blocks: their images (data URIs) and the text inside and outside <details>."""

    def __init__(self):
        super().__init__()
        self.questions: list[dict] = []
        self.depth_details = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and attrs.get("class") == "q":
            self.questions.append({"id": attrs["id"], "images": [], "hidden_images": [], "text": "", "hidden": ""})
        elif tag == "details":
            self.depth_details += 1
        elif tag == "img" and self.questions:
            key = "hidden_images" if self.depth_details else "images"
            self.questions[-1][key].append(attrs["src"])

    def handle_endtag(self, tag):
        if tag == "details":
            self.depth_details -= 1

    def handle_data(self, data):
        if self.questions:
            self.questions[-1]["hidden" if self.depth_details else "text"] += data


def _parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _png(uri: str) -> bytes:
    assert uri.startswith("data:image/png;base64,")
    return base64.b64decode(uri.split(",", 1)[1])


def test_show_writes_every_task_with_answers_behind_the_toggle(tiny_dataset, tmp_path, capsys):
    dest = tmp_path / "page.html"
    assert main(["show", str(tiny_dataset), "--n", "2", "--split", "train", "--dest", str(dest)]) == 0
    assert str(dest) in capsys.readouterr().out
    text = dest.read_text()
    assert not re.search(r'(src|href)="(?!data:|#)', text)  # self-contained: only data URIs and anchors
    questions = {q["id"]: q for q in _parse(dest).questions}
    for task in TaskName:
        rows = {r["question_id"]: r for r in pq.read_table(
            tiny_dataset / "questions" / task.value / "train.parquet").to_pylist()}
        shown = [q for qid, q in questions.items() if qid.startswith(task.value + "-")]
        assert len(shown) == 2 and all(q["id"] in rows for q in shown)
        for q in shown:
            row = rows[q["id"]]
            assert _png(q["images"][0]) == (tiny_dataset / row["front_png"]).read_bytes()
            assert "Show answer" in q["hidden"] or "Show answer" in q["text"]
            if "answer" in row:
                # candidates are numbered 0-3 as in the Parquet answer column, previews and evaluate
                assert f"Answer: {row['answer']}" in q["hidden"] and "Answer:" not in q["text"]
            if task in (TaskName.THREE_VIEW_TO_ISOMETRIC, TaskName.POSE_TO_ISOMETRIC):
                assert [_png(u) for u in q["images"][3:7]] == [(tiny_dataset / p).read_bytes()
                                                              for p in row["candidate_png"]]
                assert _png(q["hidden_images"][0]) == (tiny_dataset / row["candidate_png"][row["answer"]]).read_bytes()
            if task is TaskName.ISOMETRIC_VIEW_GENERATION:  # the target is the answer: hidden
                assert q["hidden_images"] and _png(q["hidden_images"][0]) == (
                    tiny_dataset / row["target_png"]).read_bytes()
                assert len(q["images"]) == 3
            if task is TaskName.POSE_TO_ISOMETRIC:
                assert f"query pose {row['pose']}" in q["text"]
            if task is TaskName.ISOMETRIC_TO_POSE:
                assert row["choice_poses"] == [1, 2, 3, 4]  # the default questions.pose_choices
                assert "0 = pose 1, 1 = pose 2, 2 = pose 3, 3 = pose 4" in q["text"]
                assert f"(pose {row['choice_poses'][row['answer']]})" in q["hidden"]


def test_show_with_more_than_a_split_holds_shows_all_and_says_so_in_one_line(tiny_dataset, tmp_path, capsys):
    dest = tmp_path / "page.html"
    task = TaskName.ISOMETRIC_TO_POSE
    held = pq.read_metadata(tiny_dataset / "questions" / task.value / "test.parquet").num_rows
    assert main(["show", str(tiny_dataset), "--task", task.value, "--n", str(held + 2), "--dest", str(dest)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"spare-gen show: fewer test questions than --n {held + 2}, all shown: {task.value} {held}"]
    assert len(_parse(dest).questions) == held
    assert f"{held} question{'' if held == 1 else 's'} of the test split: all it holds (--n asked for {held + 2})" \
        in dest.read_text()
    assert main(["show", str(tiny_dataset), "--task", task.value, "--n", str(held), "--dest", str(dest)]) == 0
    assert capsys.readouterr().err == ""


def test_pose_cube_highlights_the_given_poses():
    svg = pose_cube_svg((3,), "query pose 3")
    filled = re.findall(r'<circle[^>]*fill="#1f77b4"[^>]*/><text[^>]*>(\d)</text>', svg)
    assert filled == ["3"]
    assert len(re.findall(r"<line ", svg)) == 12 and svg.count("stroke-dasharray") == 3  # 3 hidden edges
    assert all(f">{k}</text>" in svg for k in "12345678")


def test_show_rejects_bad_input_in_one_line(tiny_dataset, tmp_path, capsys):
    assert main(["show", str(tiny_dataset), "--task", "nope", "--dest", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and len(err.strip().splitlines()) == 1
    assert main(["show", str(tmp_path), "--dest", str(tmp_path / "x.html")]) == 2
    assert "no question sets" in capsys.readouterr().err


def test_the_page_renders_in_a_real_browser(tiny_dataset, tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is expected (installed for the rater app's browser tests)"
    page = tmp_path / "page.html"
    assert main(["show", str(tiny_dataset), "--task", "pose_to_isometric", "--n", "1", "--dest", str(page)]) == 0
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=900,900", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=180, check=True)
    with Image.open(shot) as im:
        rgb = np.asarray(im.convert("RGB"), dtype=np.int16)
    assert rgb.shape[:2] == (900, 900)
    red = (rgb[..., 0] > 200) & (rgb[..., 0] - rgb[..., 1] > 60) & (rgb[..., 0] - rgb[..., 2] > 60)  # hidden lines
    blue = (np.abs(rgb - np.array([0x1F, 0x77, 0xB4])).max(axis=2) < 30)  # the pose cube's query corner
    assert red.sum() > 50 and blue.sum() > 50
