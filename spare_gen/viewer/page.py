"""``spare-gen show``: a self-contained HTML page of sample questions, answers behind a toggle.

Per task, ``n`` questions of a split (a seeded sample, in file order): the F, R, T drawings, the
isometric drawing or candidates, the pose cube with the query pose (pose_to_isometric) or the pose
choices (isometric_to_pose), and the answer in a ``<details>`` element (closed: try first, then look).
Drawings are embedded as data URIs, so the page works offline, copied anywhere.
"""

from __future__ import annotations

import base64
import html
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from spare_gen.atomic import write_text
from spare_gen.config.schema import TaskName
from spare_gen.data.tables import Kind, available_tasks, check_split, load_split
from spare_gen.canvas.poses import pose
from spare_gen.store.packed import drawing_bytes
from spare_gen.stages.questions.layout import DEFAULT_SPLIT, AnswerSide
from spare_gen.stages.questions.schema import QuestionCommon, split_path
from spare_gen.stages.questions.spec import TargetKind
from spare_gen.stages.questions.tasks import TASK_SPECS, question_row, question_schema, task_name
from spare_gen.rng import derive_rng
from spare_gen.rows import rows_from_table
from spare_gen.canvas.pose_cube import pose_cube_svg

SHOW_DIR = "show"
PAGE_NAME = "index.html"
STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
.q { border: 1px solid #ddd; border-radius: 6px; padding: .8em; margin: 1em 0; }
.row { display: flex; flex-wrap: wrap; gap: .8em; align-items: flex-start; }
figure { margin: 0; text-align: center; }
figcaption { font-size: 12px; color: #555; }
img { width: 150px; height: 150px; border: 1px solid #eee; image-rendering: auto; }
.answer-drawing img { border: 3px solid #2ca02c; }
details { margin-top: .6em; }
summary { cursor: pointer; color: #1f77b4; }
.meta { font-size: 12px; color: #777; }
"""


def _data_uri(out: Path, rel: str) -> str:
    return "data:image/png;base64," + base64.b64encode(drawing_bytes(out, rel)).decode("ascii")


def _figure(out: Path, rel: str | None, caption: str, css: str = "") -> str:
    if not rel:
        return f'<figure><div class="meta">(no PNG)</div><figcaption>{html.escape(caption)}</figcaption></figure>'
    return (f'<figure class="{css}"><img alt="{html.escape(caption)}" src="{_data_uri(out, rel)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _points_svg(points, size: int = 150) -> str:
    """The target point cloud seen from pose 2 (front-top-right), as an inline SVG scatter."""
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    xy = pose("2").project(p) if len(p) else np.zeros((0, 2))
    lo, hi = (xy.min(axis=0), xy.max(axis=0)) if len(xy) else (np.zeros(2), np.ones(2))
    scale = 0.9 * size / max(float((hi - lo).max()), 1e-9)
    mid = (lo + hi) / 2
    dots = "".join(f'<circle cx="{size / 2 + scale * (x - mid[0]):.1f}" cy="{size / 2 - scale * (y - mid[1]):.1f}" '
                   f'r="0.8" fill="#222"/>' for x, y in xy)
    return (f'<figure><svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}">'
            f'<rect width="{size}" height="{size}" fill="white" stroke="#eee"/>{dots}</svg>'
            f"<figcaption>target point cloud ({len(p)} points, pose 2)</figcaption></figure>")


def _caption(task: TaskName, column: str) -> str:
    """A drawing column's description in the task's schema, its format left out ("input isometric drawing")."""
    field = question_schema(task).field(column)
    return (field.metadata or {}).get(b"description", column.encode()).decode().removesuffix(", PNG")


def question_html(out: Path, task: TaskName, row: QuestionCommon) -> str:
    """One question: inputs, choices, and the answer behind a toggle; laid out from the task's spec (its loader
    keys, choice column and answer side), so a new task or variant needs nothing here."""
    spec = TASK_SPECS[task]
    keys, png = spec.loader, Kind.PNG.value
    views = row.three_views(png)
    inputs = [_figure(out, views["f"], "F (front)"), _figure(out, views["r"], "R (right)"),
              _figure(out, views["t"], "T (top)")]
    choices, answer = [], []
    query = keys.query_pose(row)
    if query is not None:
        inputs.append(f"<figure>{pose_cube_svg((query,), f'query pose {query}')}"
                      "<figcaption>which candidate is seen from this pose?</figcaption></figure>")
    for prefix in keys.drawing.values():
        inputs.append(_figure(out, row.drawing(prefix, png), _caption(task, f"{prefix}_{png}")))
    if spec.answer_side is AnswerSide.CLASSES:  # one class per choice pose
        poses = tuple(int(p) for p in spec.choices(row))
        labels = ", ".join(f"{k} = pose {p}" for k, p in enumerate(poses))
        choices.append(f"<figure>{pose_cube_svg(poses, 'choices')}<figcaption>{labels}</figcaption></figure>")
        a = _answer(row)
        answer.append(f"<p>Answer: <b>{a}</b> (pose {poses[a]})</p>"
                      f"<figure>{pose_cube_svg((poses[a],), f'pose {poses[a]}')}</figure>")
    if keys.candidates:
        pngs = row.candidates(png) or [None] * spec.n_choices(row)
        choices += [_figure(out, p, f"candidate {k}") for k, p in enumerate(pngs)]
        a = _answer(row)
        answer.append(f"<p>Answer: <b>{a}</b></p>"
                      + _figure(out, pngs[a], f"candidate {a}", "answer-drawing"))
    if keys.target is TargetKind.DRAWING and keys.target_column:
        column = f"{keys.target_column}_{png}"
        answer.append(_figure(out, row.drawing(keys.target_column, png), _caption(task, column), "answer-drawing"))
    if keys.target is TargetKind.POINTS:
        answer.append(_points_svg(keys.target_points(row)))
    prims = "" if row.n_primitives is None else f" &middot; {row.n_primitives} primitives"
    qid = html.escape(str(row.question_id))
    return "".join([
        f'<div class="q" id="{qid}">',
        f'<div class="meta">{qid} &middot; model {html.escape(str(row.model_id))}'
        f"{prims}</div>",
        f'<div class="row">{"".join(inputs)}</div>',
        f'<div class="row">{"".join(choices)}</div>' if choices else "",
        f'<details><summary>Show answer</summary><div class="row">{"".join(answer)}</div></details>',
        "</div>",
    ])


def _answer(row: QuestionCommon) -> int:
    answer = row.correct_answer()
    if answer is None:
        raise ValueError(f"{row.question_id}: a multiple-choice question without an answer")
    return answer


def sample_rows(out: Path, task: TaskName, split: str, n: int) -> list[QuestionCommon]:
    """``n`` questions of the split, a seeded sample kept in file order (all of them when fewer)."""
    table = load_split(out, task, split)
    keep = sorted(derive_rng(0, "show", task.value, split).permutation(table.num_rows)[:max(n, 0)].tolist())
    return rows_from_table(question_row(task), table.take(keep)) if keep else []


def _count(n: int) -> str:
    return f"{n} question{'' if n == 1 else 's'}"


def page_html(out: Path, tasks: list[TaskName], split: str, n: int) -> tuple[str, dict[TaskName, int]]:
    """The page, and each task whose split holds fewer than ``n`` questions with how many it holds (all shown)."""
    sections, fewer = [], {}
    for task in tasks:
        if not split_path(out, task.value, split).is_file():
            sections.append(f"<h2>{task.value}</h2><p>No {split} questions (the split is empty).</p>")
            fewer[task] = 0
            continue
        rows = sample_rows(out, task, split, n)
        note = ""
        if len(rows) < n:
            fewer[task] = len(rows)
            note = f": all it holds (--n asked for {n})"
        sections.append(f'<h2 id="{task.value}">{task.value}</h2>'
                        f"<p class='meta'>{_count(len(rows))} of the {split} split{note}</p>"
                        + "".join(question_html(out, task, r) for r in rows))
    index = " &middot; ".join(f'<a href="#{t.value}">{t.value}</a>' for t in tasks)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>spare_gen samples: {html.escape(out.name)}</title><style>{STYLE}</style></head><body>"
            f"<h1>Sample questions of {html.escape(str(out))}</h1><p>{index}</p>"
            "<p class='meta'>Try each question, then open <i>Show answer</i>. Pose cube: isometric poses 1-8 sit "
            "on its corners; F, R, T are the front, right and top faces.</p>"
            + "".join(sections) + "</body></html>\n"), fewer


@dataclass(frozen=True)
class ShownPage:
    """Where the page was written, and each task whose split held fewer questions than asked (and how many)."""

    path: Path
    fewer: dict[TaskName, int]


def write_page(out: Path, task: str | None = None, n: int = 8, split: str = DEFAULT_SPLIT,
               dest: Path | None = None) -> ShownPage:
    out = Path(out)
    check_split(split)
    if n < 1:
        raise ValueError(f"--n must be at least 1, got {n}")
    tasks = [task_name(task)] if task else available_tasks(out)
    if not tasks:
        raise FileNotFoundError(f"no question sets under {out / 'questions'} (run the question stage)")
    dest = Path(dest) if dest else out / SHOW_DIR / PAGE_NAME
    dest.parent.mkdir(parents=True, exist_ok=True)
    text, fewer = page_html(out, tasks, split, n)
    return ShownPage(write_text(dest, text), fewer)


def main(out: Path, task: str | None = None, n: int = 8, split: str = DEFAULT_SPLIT, dest: Path | None = None) -> int:
    try:
        page = write_page(out, task, n, split, dest)
    except (ValueError, FileNotFoundError) as exc:
        print(f"spare-gen show: error: {exc}", file=sys.stderr)
        return 2
    if page.fewer:
        held = ", ".join(f"{t.value} {k}" for t, k in page.fewer.items())
        print(f"spare-gen show: fewer {split} questions than --n {n}, all shown: {held}", file=sys.stderr)
    print(f"wrote {page.path} (open it in a browser: file://{page.path.resolve()})")
    return 0
