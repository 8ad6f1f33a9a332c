"""The "## Bias audit" section of the dataset card, between markers so a rerun replaces it."""

from __future__ import annotations


from spare_gen.audit.report import AuditReport
from spare_gen.audit.text import finding, interval, pct, view_aware_line
from spare_gen.stages.questions.tasks import TASKS

BEGIN = "<!-- spare-gen audit: begin (rewritten by `spare-gen audit`) -->"
END = "<!-- spare-gen audit: end -->"


def _cells(e) -> list[str]:
    if e is None:
        return ["-", "-", "-"]
    return [f"{e['correct']}/{e['total']}", pct(e["accuracy"]), interval(e["ci_family"], " - ")]


def view_aware_sentence(section: dict) -> str:
    """The card's one sentence on the view-aware probes: per task, views against blind with intervals."""
    return (f"View-aware probes (gradient-boosted trees on {len(section['features'])} features of each "
            f"{section['image_side']} x {section['image_side']} drawing; *views* sees F, R, T and the choice, *blind* "
            f"the choice alone; {section['cv_folds']}-fold cross-validation grouped by model, 95% intervals; "
            f"fewer than {section['min_questions']} questions can show only a large difference): "
            + "; ".join(view_aware_line(r) for r in section["results"]) + ".")


def section_text(report: AuditReport) -> str:
    rows = []
    for r in report.results:
        t, c = _cells(r["evaluations"]["test"]), _cells(r["evaluations"]["cv"])
        rows.append(f"| `{r['task']}` | `{r['probe']}` | {' | '.join(t)} | {' | '.join(c)} | "
                    f"{r['verdict'].replace('_', ' ')} |")
    flagged, missing, empty = report.flagged, report.not_audited, report.empty_splits
    lines = [f"Found: {finding(report)}"]  # exactly what the audit found, intervals included
    if flagged:
        lines.append(f"**Not within chance: {', '.join(f'`{f}`' for f in flagged)}.**")
    if missing:
        lines.append(f"**Not audited (the probe could not run: empty split or too few questions): "
                     f"{', '.join(f'`{f}`' for f in missing)}.** These are not evidence of a fair dataset.")
    if empty:
        lines.append(f"**WARNING: empty splits: {', '.join(f'`{e}`' for e in empty)}.**")
    if report.view_aware:
        lines.append(view_aware_sentence(report.view_aware))
    summary = "\n\n".join(lines)
    found = report.answer_key_columns  # task order (reports/audit.json sorts its keys)
    keys = {t.value: found[t.value] for t in TASKS if found.get(t.value)}
    key_note = ("" if not keys else " Columns holding the answer mapping on purpose (not model input) are left "
                "out of `metadata`: " + "; ".join(f"`{t}`: {', '.join(f'`{c}`' for c in cs)}"
                                                   for t, cs in keys.items()) + ".")
    return "\n".join([
        BEGIN,
        "## Bias audit",
        "",
        "Question-blind probes try to pick the answer without the question (no F, R, T drawings, no query pose): "
        "`line_stats` (conditional logistic regression on per-drawing ink, line counts and lengths, hidden-line "
        "shares, extent and bbox aspect), `pixels_16` (the same on 16 x 16 grey thumbnails) and `answer_position` "
        "(always the most frequent training answer; test split only). Beyond pixels, what any loader hands a model: "
        "`paths` (tokens of each choice's file paths and their matches with the question's values, e.g. a pose "
        "number as a file name), `file_order` (where a choice's file sorts among the question's files or in its "
        "folder, and the question's row position), `metadata` (every exposed non-path column, e.g. per-candidate "
        "lists), `file_bytes` (log size, mean byte and byte entropy of each choice's PNG, SVG and STEP files); "
        "token probes are a smoothed per-token lookup learned on the training questions." + key_note +
        " Candidates are scored one by one with "
        "shared weights and the best of the 4 is chosen; for `isometric_to_pose` the probe classifies the "
        "isometric drawing alone. *test*: fitted on the train split, scored on the test split; "
        f"*cv*: {report.cv_folds}-fold cross-validation over the questions of all splits, stratified by "
        "answer. A probe is *within chance* when the Wilson interval of each accuracy at a family-wise "
        f"{100 * report.family_confidence:.0f}% level "
        f"({100 * report.per_evaluation_confidence:.2f}% per evaluation, Bonferroni) contains the chance level "
        f"25%. A probe that could not run (an empty split, fewer than {report.min_train} training questions) is "
        "*not audited*, never within chance, and `spare-gen audit` exits with code 3. "
        f"Seed {report.seed}; 95% intervals and details in `reports/audit.json`. Few questions give wide "
        "intervals: the audit can then only rule out large biases.",
        "",
        summary,
        "",
        "| task | probe | test correct | test accuracy | test family CI | cv correct | cv accuracy | cv family CI "
        "| verdict |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        END,
    ])
