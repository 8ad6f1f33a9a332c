"""`spare-gen quiz OUT --withdraw PERSON`: delete every file a person left under ``OUT/quiz`` (their plan, answers,
consent record and question on screen, under each protocol), and say what was deleted.

The scored copies (``reports/humans.json``, ``reports/human_answers.csv``, the card's section) are the command's to
redo (:mod:`spare_gen.cli.quiz`): they are scored again without the person.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spare_gen.quiz.plan import PERSON_DIRS, Protocol, check_person, person_file
from spare_gen.webapp.store import read_rows

SUFFIXES = {"answers": ".csv"}  # the other folders hold one .json per person


@dataclass(frozen=True)
class Removed:
    """One deleted file and, for an answers file, how many answers it held."""

    path: Path
    answers: int | None = None

    def line(self) -> str:
        held = f" ({self.answers} answer{'' if self.answers == 1 else 's'})" if self.answers is not None else ""
        return f"{self.path}{held}"


def person_files(out: Path, person: str) -> list[Path]:
    """Every file of ``person`` under ``OUT/quiz`` that exists."""
    check_person(person)
    return [path for protocol in Protocol for folder in PERSON_DIRS
            if (path := person_file(out, protocol, folder, person, SUFFIXES.get(folder, ".json"))).is_file()]


def withdraw(out: Path, person: str) -> list[Removed]:
    """Delete the person's files; what was deleted (empty when nothing of them was there)."""
    removed = []
    for path in person_files(Path(out), person):
        answers = len(read_rows(path)) if path.suffix == ".csv" else None
        path.unlink()
        removed.append(Removed(path, answers))
    return removed
