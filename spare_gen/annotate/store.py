"""The per-rater answers file: one CSV row appended and fsync'ed per answer, read back to resume.

Columns are ``ANSWER_FILE_COLUMNS`` of :mod:`spare_gen.rating.pairs` (the format `spare-gen rank`
reads); ``choice`` is relative to the pair's stored sides. A line cut short by a crash (no final
newline) is removed when the file is opened again.
"""

from __future__ import annotations

from pathlib import Path

from spare_gen.webapp.store import append_row, read_rows, utc_now  # noqa: F401  (utc_now: the answers' clock)
from spare_gen.rating.pairs import ANSWER_FILE_COLUMNS, Choice

_MIRROR = {Choice.LEFT: Choice.RIGHT, Choice.RIGHT: Choice.LEFT, Choice.EQUAL: Choice.EQUAL}


def stored_choice(shown: Choice, shown_swapped: bool) -> Choice:
    """The choice relative to the pair's stored left/right, from the side the rater saw it on."""
    return _MIRROR[shown] if shown_swapped else shown


def read_positions(path: Path) -> set[int]:
    """Session positions already answered in this file (a line cut by a crash removed first)."""
    return {int(row["position"]) for row in read_rows(path) if (row.get("position") or "").strip().isdigit()}


def append_answer(path: Path, row: dict[str, object]) -> None:
    """Append one answer (header first if the file is new), flush and fsync before returning."""
    append_row(path, tuple(ANSWER_FILE_COLUMNS), row)
