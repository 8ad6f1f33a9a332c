"""The "## Human performance" section of the dataset card, between markers: `spare-gen evaluate` rewrites it."""

from __future__ import annotations

from spare_gen.stages.questions.tasks import TASK_SPECS
from spare_gen.config.schema import TaskName

BEGIN = "<!-- spare-gen humans: begin (rewritten by `spare-gen evaluate OUT OUT/quiz`) -->"
END = "<!-- spare-gen humans: end -->"


def _pct(x) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f} %"


def section_text(report: dict) -> str:
    rows = []
    for r in report["results"]:
        if r["phase"] != "test":
            continue
        a = r["pooled"]
        rows.append(f"| {TASK_SPECS[TaskName(r['task'])].spare3d.title} | {r['protocol']} | {r['people']} | "
                    f"{a['correct']}/{a['total']} | **{_pct(a['accuracy'])}** [{_pct(a['ci'][0])}, {_pct(a['ci'][1])}] "
                    f"| {_pct(r['best_person']['accuracy'])} | {r['seconds'].get('median', float('nan')):.1f} | "
                    f"{_pct(r['paper'])} |")
    return "\n".join([
        BEGIN,
        "## Human performance",
        "",
        "People answered this dataset's test questions with `spare-gen quiz` under SPARE3D's protocols (*untrained*: "
        "a few random questions per task, no feedback; *trained*: a training phase with feedback, then timed "
        "questions). Accuracy pools every test answer, with its 95 % Wilson interval; *best* is the best person's "
        "accuracy; a timed-out answer counts as wrong. The paper's column is SPARE3D's untrained average or "
        "trained best, measured on the paper's own questions: a reference point, not these questions' score. "
        "Per person and training answers: `reports/humans.json`; every answer: `reports/human_answers.csv`.",
        "",
        "| task | protocol | people | right | accuracy [95 % CI] | best | median s/question | SPARE3D paper |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        END,
    ])
