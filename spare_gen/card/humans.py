"""The "## Human performance" section of the dataset card, between markers: `spare-gen evaluate` rewrites it."""

from __future__ import annotations

from pathlib import Path


BEGIN = "<!-- spare-gen humans: begin (rewritten by `spare-gen evaluate OUT OUT/quiz`) -->"
END = "<!-- spare-gen humans: end -->"


def section_text(report: dict, out: Path | None = None) -> str:
    """The section: Figure 6's own table (:func:`spare_gen.baseline.figure6.card_table`), this dataset's people beside
    the paper's people and networks, and this dataset's networks when ``OUT/figure6/figure6.json`` has a run."""
    from spare_gen.baseline.figure6 import card_table  # matplotlib only when a card has people: not on every run

    table = card_table(out, report)
    return "\n".join([
        BEGIN,
        "## Human performance",
        "",
        "People answered this dataset's test questions with `spare-gen quiz` under SPARE3D's protocols (*untrained*: "
        "a few random questions per task, no feedback; *trained*: a training phase with feedback, then timed "
        "questions). The table is `pipelines/reproduce_spare3d_figure6.py`'s own: people beside networks, this "
        "dataset's beside the paper's. People's accuracy pools every test answer; *best* is the best person's "
        "accuracy; a timed-out answer counts as wrong. The paper's people were measured on the paper's own "
        "questions: a reference point, not these questions' score. Per person and training answers: "
        "`reports/humans.json` (and `spare-gen evaluate OUT OUT/quiz`'s printout); every answer: "
        "`reports/human_answers.csv`.",
        "",
        table.rstrip("\n"),
        END,
    ])
