"""The dataset's multiple-choice questions as the quiz shows them: drawings by role, never by file name or answer.

Each question is laid out from its task's spec (``TaskSpec.loader``, ``answer_side``, ``choice_column``), as
``spare-gen show`` lays it out: the F, R, T drawings, the task's extra input drawing (the isometric drawing of
isometric_to_pose), the query pose (pose_to_isometric) or the choice poses (isometric_to_pose), and the candidate
drawings. A drawing is served from the dataset's own SVG file when it has one (sharp at any size), else its PNG,
with hidden lines as the dataset draws them. File names can tell the answer (``content_named_columns``), so the
browser only ever sees role names (``f``, ``iso``, ``c2``) under position-based URLs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from spare_gen.config.schema import TaskName
from spare_gen.data.evaluate import MULTIPLE_CHOICE
from spare_gen.data.tables import Kind, available_tasks, load_rows
from spare_gen.stages.questions.layout import AnswerSide, task_name
from spare_gen.stages.questions.schema import QuestionCommon, split_path
from spare_gen.stages.questions.tasks import TASK_SPECS
from spare_gen.store.inventory import MANIFEST_FILE
from spare_gen.store.packed import drawing_bytes, drawing_exists

TRAIN_SPLIT, TEST_SPLIT = "train", "test"
MEDIA_TYPES = {".svg": "image/svg+xml", ".png": "image/png"}
VIEW_LABELS = {"f": "F (front)", "r": "R (right)", "t": "T (top)"}
HIDDEN_NOTES = {"red": "Hidden lines are drawn in red.", "dashed_grey": "Hidden lines are drawn dashed, in grey."}


@dataclass(frozen=True)
class Question:
    """One question: its drawings by role (role -> (svg path, png path), relative to the dataset), its poses and
    its answer (which never reaches the browser before the person has answered)."""

    question_id: str
    task: TaskName
    split: str
    answer: int
    drawings: dict[str, tuple[str | None, str | None]]
    candidates: int  # candidate drawings c0..c{n-1} (0 when the choices are poses)
    choice_poses: tuple[int, ...]  # the poses to choose from (isometric_to_pose), else ()
    query_pose: int | None  # the pose asked about (pose_to_isometric), else None

    @property
    def n_choices(self) -> int:
        return self.candidates or len(self.choice_poses)

    @property
    def choice_labels(self) -> tuple[str, ...]:
        """What each choice's button says (key k + 1 picks choice k): its pose, or its candidate's number; the
        feedback names the right answer in these words."""
        if self.choice_poses:
            return tuple(f"pose {p}" for p in self.choice_poses)
        return tuple(f"candidate {k + 1}" for k in range(self.candidates))


def _pair(row: QuestionCommon, prefix: str) -> tuple[str | None, str | None]:
    return row.drawing(prefix, Kind.SVG.value), row.drawing(prefix, Kind.PNG.value)


def question_of(task: TaskName, row: QuestionCommon) -> Question:
    """The question of a split row, laid out from the task's spec."""
    spec = TASK_SPECS[task]
    keys = spec.loader
    drawings = {view: (svg, png) for (view, svg), png in
                zip(row.three_views(Kind.SVG.value).items(), row.three_views(Kind.PNG.value).values())}
    for key, prefix in keys.drawing.items():
        drawings[key] = _pair(row, prefix)
    n = 0
    if keys.candidates:
        svgs = row.candidates(Kind.SVG.value)
        pngs = row.candidates(Kind.PNG.value)
        n = max(len(svgs), len(pngs))
        for k in range(n):
            drawings[f"c{k}"] = (svgs[k] if k < len(svgs) else None, pngs[k] if k < len(pngs) else None)
    poses = tuple(int(p) for p in spec.choices(row)) if spec.answer_side is AnswerSide.CLASSES else ()
    answer = row.correct_answer()
    if answer is None:
        raise ValueError(f"{row.question_id}: a {task.value} question without an answer (a damaged question table)")
    return Question(str(row.question_id), task, str(row.split), answer, drawings, n, poses, keys.query_pose(row))


class Bank:
    """The multiple-choice questions of a dataset's train and test splits, loaded once at server start."""

    def __init__(self, out: Path, tasks: tuple[str, ...] = ()):
        self.out = Path(out)
        if not (self.out / MANIFEST_FILE).is_file():
            raise FileNotFoundError(f"quiz needs a dataset: {self.out / MANIFEST_FILE} does not exist "
                                    "(run `spare-gen run` first)")
        chosen = [task_name(t) for t in tasks] or [t for t in available_tasks(self.out) if t in MULTIPLE_CHOICE]
        for t in chosen:
            if t not in MULTIPLE_CHOICE:
                raise ValueError(f"--tasks: quiz serves the multiple-choice tasks "
                                 f"{', '.join(m.value for m in MULTIPLE_CHOICE)}; {t.value!r} is a generation task")
        self.tasks = tuple(t for t in MULTIPLE_CHOICE if t in chosen)  # SPARE3D's order
        if not self.tasks:
            raise FileNotFoundError(f"no multiple-choice questions under {self.out / 'questions'} "
                                    "(run the question stage)")
        self.questions: dict[str, Question] = {}
        self.by_split: dict[tuple[TaskName, str], list[str]] = {}
        for task in self.tasks:
            for split in (TRAIN_SPLIT, TEST_SPLIT):
                rows = (load_rows(self.out, task, split)
                        if split_path(self.out, task.value, split).is_file() else [])
                self.by_split[(task, split)] = [str(r.question_id) for r in rows]
                self.questions.update({str(r.question_id): question_of(task, r) for r in rows})
        dataset = json.loads((self.out / MANIFEST_FILE).read_text(encoding="utf-8"))
        style = ((dataset.get("config") or {}).get("render") or {}).get("hidden_style", "red")
        self.hidden_note = HIDDEN_NOTES.get(style, "")

    def ids(self, task: TaskName, split: str) -> list[str]:
        return self.by_split.get((task, split), [])

    def fingerprint(self) -> str:
        """SHA-256 of every question id and answer: a stored plan is only valid for the questions it was drawn from."""
        text = "\n".join(f"{q}\t{self.questions[q].answer}" for q in sorted(self.questions))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def picture(self, question: Question, role: str) -> tuple[bytes, str] | None:
        """(bytes, media type) of a drawing by role: its SVG if the dataset has it, else its PNG; None if neither."""
        for rel in question.drawings.get(role, (None, None)):
            if rel and drawing_exists(self.out, rel):
                return drawing_bytes(self.out, rel), MEDIA_TYPES[Path(rel).suffix.lower()]
        return None
