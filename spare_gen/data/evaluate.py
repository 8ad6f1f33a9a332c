"""``spare-gen evaluate``: score multiple-choice predictions against a task split.

Predictions are a CSV with a header and the columns ``question_id,answer`` (more columns are
ignored); ``answer`` is the chosen index 0..3 written as an integer. Scoring covers the three
multiple-choice tasks; the generation tasks have no answer to compare and are refused. The report
gives accuracy with a Wilson 95% interval overall and per primitive count, the chance level, and the
SPARE3D paper's human results for reference; it is printed and written to
``<out>/reports/evaluate_<task>_<split>.json``.
"""

from __future__ import annotations

import csv
import hashlib
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from spare_gen.atomic import write_json
from spare_gen.config.schema import TaskName
from spare_gen.data.human import human_reference
from spare_gen.data.stats import CONFIDENCE, wilson
from spare_gen.data.tables import check_split, load_rows
from spare_gen.store.inventory import REPORTS_DIR
from spare_gen.stages.questions.layout import task_name
from spare_gen.stages.questions.schema import ANSWER_COLUMN, QuestionCommon
from spare_gen.stages.questions.tasks import TASK_SPECS, TASKS, dataset_choices

REQUIRED_COLUMNS = ("question_id", "answer")
MULTIPLE_CHOICE = tuple(t for t in TASKS if TASK_SPECS[t].n_answers)
SHOWN_IDS = 3  # ids quoted per kind of problem in a one-line error


class PredictionError(ValueError):
    """The predictions file cannot be scored as it is (unknown, missing or invalid entries)."""


@dataclass
class Problems:
    """What is wrong with a predictions file, by kind; each a list of question ids (or id: value)."""

    unknown: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.unknown or self.missing or self.invalid or self.duplicated)

    def describe(self) -> str:
        parts = []
        for name, ids in (("unknown question ids", self.unknown), ("questions without a prediction", self.missing),
                          ("invalid answers", self.invalid), ("duplicated question ids", self.duplicated)):
            if ids:
                more = f", ... ({len(ids) - SHOWN_IDS} more)" if len(ids) > SHOWN_IDS else ""
                parts.append(f"{len(ids)} {name} ({', '.join(ids[:SHOWN_IDS])}{more})")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {k: {"count": len(v), "ids": v} for k, v in vars(self).items()}


def multiple_choice_task(task: TaskName | str, use: str = "evaluate scores") -> TaskName:
    """The task, if it is multiple-choice; else one ValueError saying what ``use`` (e.g. "evaluate scores") takes."""
    task = task_name(task)
    if task not in MULTIPLE_CHOICE:
        raise ValueError(f"{use} the multiple-choice tasks {', '.join(t.value for t in MULTIPLE_CHOICE)}; "
                         f"{task.value!r} is a generation task")
    return task


def read_predictions(path: Path) -> list[tuple[str, str]]:
    """(question_id, raw answer text) pairs, in file order."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no predictions file {path}")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise PredictionError(f"{path.name}: header {header!r} lacks column(s) {', '.join(missing)}; "
                                  f"expected a CSV with the header question_id,answer")
        reader.fieldnames = header
        return [((r["question_id"] or "").strip(), (r["answer"] or "").strip()) for r in reader]


def parse_answer(text: str, n_answers: int) -> int | None:
    """The answer index, or None unless ``text`` is an integer in 0..n_answers-1."""
    try:
        value = int(text)
    except ValueError:
        return None
    return value if 0 <= value < n_answers else None


def check_predictions(pairs: list[tuple[str, str]], question_ids: list[str], n_answers: int
                      ) -> tuple[dict[str, int], Problems]:
    """Valid answers by question id, and every problem found (invalid and duplicated ids get no answer)."""
    known = set(question_ids)
    counts = Counter(q for q, _ in pairs)
    problems = Problems()
    problems.duplicated = sorted(q for q, n in counts.items() if n > 1 and q in known)
    answers: dict[str, int] = {}
    for qid, raw in pairs:
        if qid not in known:
            problems.unknown.append(qid or "<empty>")
        elif counts[qid] == 1:
            value = parse_answer(raw, n_answers)
            if value is None:
                problems.invalid.append(f"{qid}: {raw!r}")
            else:
                answers[qid] = value
    seen = set(q for q, _ in pairs)
    problems.missing = [q for q in question_ids if q not in seen]
    return answers, problems


def _stratum(n_primitives) -> str:
    return "file models" if n_primitives is None else f"{int(n_primitives)} primitives"


@dataclass(frozen=True)
class AnswerKey:
    """One question as scoring reads it: its id, its stratum (primitive count, None for a file model) and the index
    of its correct choice."""

    question_id: str
    n_primitives: int | None
    answer: int

    @classmethod
    def of(cls, row: QuestionCommon) -> "AnswerKey":
        """The key of a multiple-choice question row (a row without an answer is a ValueError)."""
        answer = row.correct_answer()
        if answer is None:
            raise ValueError(f"{row.question_id}: the question has no answer (not a multiple-choice task)")
        return cls(str(row.question_id), row.n_primitives, answer)


def score(keys: list[AnswerKey], answers: dict[str, int], n_answers: int) -> dict:
    """Accuracy overall and per primitive count; a question without a valid answer counts as wrong."""
    correct = [answers.get(k.question_id) == k.answer for k in keys]
    strata: dict[str, list[bool]] = {}
    for k, ok in sorted(zip(keys, correct), key=lambda x: (x[0].n_primitives is None, x[0].n_primitives or 0)):
        strata.setdefault(_stratum(k.n_primitives), []).append(ok)
    return {
        "overall": wilson(sum(correct), len(correct)).to_dict(),
        "by_primitives": {name: wilson(sum(oks), len(oks)).to_dict() for name, oks in strata.items()},
        "chance": 1.0 / n_answers,
    }


def evaluate(out: Path, task: TaskName | str, split: str, predictions_path: Path, *, lenient: bool = False) -> dict:
    """The score report; raises PredictionError on a bad file unless ``lenient`` (then problems count as wrong)."""
    task = multiple_choice_task(task)
    check_split(split)
    n_answers = dataset_choices(out, task)
    columns = ["question_id", "n_primitives", ANSWER_COLUMN]
    rows = [AnswerKey.of(r) for r in load_rows(out, task, split, columns=columns)]
    pairs = read_predictions(predictions_path)
    answers, problems = check_predictions(pairs, [r.question_id for r in rows], n_answers)
    if problems and not lenient:
        raise PredictionError(f"{Path(predictions_path).name}: {problems.describe()}; answers must be integers "
                              f"0..{n_answers - 1}, one per question of {task.value}/{split} "
                              f"(--lenient counts these as wrong)")
    human = human_reference(task)
    return {
        "task": task.value,
        "split": split,
        "predictions": str(predictions_path),
        "predictions_sha256": hashlib.sha256(Path(predictions_path).read_bytes()).hexdigest(),
        "n_questions": len(rows),
        "confidence": CONFIDENCE,
        **score(rows, answers, n_answers),
        "human": human.to_dict() if human else None,
        "lenient": lenient,
        "problems": problems.to_dict(),
    }


def _pct(x: float) -> str:
    return "   -  " if x != x else f"{100 * x:5.1f}%"


def format_report(report: dict) -> str:
    """A small text table of the report."""
    lines = [f"{report['task']} / {report['split']}: {report['n_questions']} questions",
             f"{'subset':<16}{'n':>6}{'correct':>9}{'accuracy':>10}   95% CI"]
    for name, acc in [*report["by_primitives"].items(), ("all", report["overall"])]:
        lo, hi = acc["ci"]
        lines.append(f"{name:<16}{acc['total']:>6}{acc['correct']:>9}{_pct(acc['accuracy']):>10}   "
                     f"[{_pct(lo).strip()}, {_pct(hi).strip()}]")
    lines.append(f"chance: {_pct(report['chance']).strip()}")
    if report["human"]:
        h = report["human"]
        lines.append(f"humans (SPARE3D paper, its own questions): untrained average "
                     f"{_pct(h['untrained_average']).strip()}, trained max {_pct(h['trained_max']).strip()}")
    return "\n".join(lines)


def report_path(out: Path, task: str, split: str) -> Path:
    return Path(out) / REPORTS_DIR / f"evaluate_{task}_{split}.json"


def main(out: Path, task: str, split: str, predictions_path: Path, lenient: bool = False) -> int:
    """CLI entry: 0 when scored, 2 on a bad task, split, dataset or predictions file."""
    try:
        report = evaluate(Path(out), task, split, Path(predictions_path), lenient=lenient)
    except (ValueError, FileNotFoundError) as exc:
        print(f"spare-gen evaluate: error: {exc}", file=sys.stderr)
        return 2
    problems = report["problems"]
    if any(v["count"] for v in problems.values()):
        counts = ", ".join(f"{v['count']} {k}" for k, v in problems.items() if v["count"])
        print(f"spare-gen evaluate: warning: lenient scoring ({counts}): unknown ids are ignored, missing, "
              f"invalid and duplicated ones count as wrong", file=sys.stderr)
    print(format_report(report))
    path = write_json(report_path(Path(out), report["task"], split), report)
    print(f"report: {path}")
    return 0
