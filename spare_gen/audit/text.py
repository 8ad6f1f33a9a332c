"""Plain-text rendering of an audit report: the printed table and the warnings."""

from __future__ import annotations

from spare_gen.audit.report import AuditReport

# A verdict whose family interval is wider than +-this (accuracy, 0.15 = 15 points) rests on too few questions to
# tell a shortcut from chance: "within chance" then says little, and the audit says so
MAX_HALF_WIDTH = 0.15


def pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def interval(ci, sep: str = ", ") -> str:
    return "-" if ci is None else f"[{pct(ci[0])}{sep}{pct(ci[1])}]"


def _evaluation_cells(e) -> list[str]:
    if e is None:
        return ["-", "-", "-"]
    return [f"{e['correct']}/{e['total']}", pct(e["accuracy"]), interval(e["ci_family"])]


def format_report(report: AuditReport) -> str:
    head = (f"{'task':<26}{'probe':<17}{'test':>8}{'acc':>8}  {'family CI':<17}{'cv':>8}{'acc':>8}  "
            f"{'family CI':<17}verdict")
    lines = [head]
    for r in report.results:
        t = _evaluation_cells(r["evaluations"]["test"])
        c = _evaluation_cells(r["evaluations"]["cv"])
        lines.append(f"{r['task']:<26}{r['probe']:<17}{t[0]:>8}{t[1]:>8}  {t[2]:<17}{c[0]:>8}{c[1]:>8}  "
                     f"{c[2]:<17}{r['verdict']}")
    lines.append(f"test: train split -> test split; cv: {report.cv_folds}-fold over all splits; '-': could not run "
                 "(not_audited) or not applicable (answer_position cv). chance 25.0%; "
                 f"family CI: Wilson at {100 * report.family_confidence:.0f}% family-wise "
                 f"({100 * report.per_evaluation_confidence:.2f}% per evaluation, Bonferroni)")
    return "\n".join(lines)


def summary(report: AuditReport) -> str:
    """One line: how many probes ran and how many of those are within chance, which are flagged, which were not
    audited."""
    n = len(report.results)
    flagged, missing = report.flagged, report.not_audited
    within, ran = n - len(flagged) - len(missing), n - len(missing)
    if not ran:
        parts = [f"none of the {n} question-blind probes could run (too little data)"]
    elif missing:
        parts = [f"{ran} of {n} question-blind probes ran, {within} of them within chance"]
    else:
        parts = [f"{within} of {n} question-blind probes within chance"]
    if flagged:
        parts.append(f"NOT within chance: {', '.join(flagged)}")
    if missing:
        parts.append(f"NOT AUDITED (could not run): {', '.join(missing)}")
    if report.empty_splits:
        parts.append(f"EMPTY SPLITS: {', '.join(report.empty_splits)}")
    wide = too_little_data(report)
    if wide:
        parts.append(f"TOO LITTLE DATA: {len(wide)} evaluation(s) with an interval wider than "
                     f"+-{100 * MAX_HALF_WIDTH:.0f} points")
    if report.view_aware:
        parts.append(view_aware_summary(report.view_aware))
    return "; ".join(parts)


def view_aware_summary(section: dict) -> str:
    """How many tasks' view-aware probes beat their blind twins, and on how many tasks there is too little data."""
    results = section["results"]
    above = [r for r in results if r.get("views_above_blind")]
    text = f"views beat blind on {len(above)} of {len(results)} tasks (view-aware probes)"
    small = view_aware_too_little(section)
    missing = [r["task"] for r in results if "not_audited" in r]
    if missing:
        text += f"; view-aware NOT AUDITED: {', '.join(missing)}"
    if small:
        text += f"; TOO LITTLE DATA for the view-aware probes: {len(small)} task(s)"
    return text


def view_aware_too_little(section: dict) -> list[dict]:
    """The view-aware results on fewer than ``min_questions`` questions: too few to tell views from blind."""
    return [r for r in section["results"] if "questions" in r and r["questions"] < section["min_questions"]]


def view_aware_line(r: dict) -> str:
    """One task's views against blind, e.g. ``isometric_to_pose: views 47.3% [43.5%, 51.2%] against blind 28.1% [...],
    difference +19.2 points [...], answers shuffled 23.0% / 25.8%``."""
    if "not_audited" in r:
        return f"{r['task']}: not audited ({r['not_audited']})"
    d = r["difference"]
    return (f"{r['task']}: views {pct(r['views']['accuracy'])} {interval(r['views']['ci95'])} against blind "
            f"{pct(r['blind']['accuracy'])} {interval(r['blind']['ci95'])}, difference {100 * d['mean']:+.1f} points "
            f"[{100 * d['ci95'][0]:+.1f}, {100 * d['ci95'][1]:+.1f}], answers shuffled "
            f"{pct(r['shuffled']['views']['accuracy'])} / {pct(r['shuffled']['blind']['accuracy'])} "
            f"({r['questions']} questions)")


def too_little_data(report: AuditReport) -> list[str]:
    """One line per evaluation whose family interval is wider than +-MAX_HALF_WIDTH: too few questions to judge."""
    out = []
    for r in report.results:
        for name, e in r["evaluations"].items():
            if e is not None and e.get("ci_family") and (e["ci_family"][1] - e["ci_family"][0]) / 2 > MAX_HALF_WIDTH:
                out.append(f"{r['task']}/{r['probe']} ({name}) rests on {e['total']} questions: its interval "
                           f"{interval(e['ci_family'])} is wider than +-{100 * MAX_HALF_WIDTH:.0f} points, too "
                           f"little data to tell a shortcut from chance; make more questions")
    return out


REPORT_HINT = "see reports/audit.json"


def not_audited(report: AuditReport) -> list[str]:
    """One line per evaluation that could not run, with its reason."""
    return [f"{r['task']}/{r['probe']} ({name}): {reason}" for r in report.results
            for name, reason in r.get("not_audited", {}).items()]


def warnings(report: AuditReport) -> list[str]:
    """What a reader must know, each said once with its count: the empty splits, the evaluations that could not run,
    each evaluation whose interval excludes chance (a finding of its own), and the evaluations on too little data
    (an interval wider than +-MAX_HALF_WIDTH); the details are in reports/audit.json."""
    out = []
    empty = report.empty_splits
    if empty:
        out.append(f"{len(empty)} EMPTY split(s), so every probe that needs one is not audited: {', '.join(empty)}")
    missing = not_audited(report)
    if missing:
        out.append(f"{len(missing)} evaluation(s) NOT AUDITED (could not run), e.g. {missing[0]}: {REPORT_HINT}")
    for r in report.results:
        for name, e in r["evaluations"].items():
            if e is None or e["verdict"] == "within_chance":
                continue
            where = f"{r['task']}/{r['probe']} ({name})"
            if e["verdict"] == "above_chance":
                out.append(f"{where} picks the answer in {e['correct']} of {e['total']} questions "
                           f"({pct(e['accuracy'])}) without seeing the question; family CI from "
                           f"{pct(e['ci_family'][0])} is above chance {pct(r['chance'])}: the answers carry a shortcut")
            else:
                out.append(f"{where} scores {pct(e['accuracy'])}, below chance {pct(r['chance'])} (family CI up to "
                           f"{pct(e['ci_family'][1])}): the held-out questions differ from the training ones in a "
                           f"learnable way")
    wide = too_little_data(report)
    if wide:  # one line, with the first as the example: a small dataset has dozens
        out.append(f"{len(wide)} evaluation(s) on too little data, e.g. {wide[0]}: {REPORT_HINT}")
    section = report.view_aware
    small = view_aware_too_little(section) if section else []
    if small:
        out.append(f"{len(small)} task(s) with too little data for the view-aware probes (fewer than "
                   f"{section['min_questions']} questions), e.g. {small[0]['task']} with {small[0]['questions']}: "
                   f"views against blind can show only a large difference; make more questions: {REPORT_HINT}")
    return out


def _widest(report: AuditReport):
    """(half width, ``task/probe (evaluation)``, evaluation) of the widest family interval, or None."""
    found = [((e["ci_family"][1] - e["ci_family"][0]) / 2, f"{r['task']}/{r['probe']} ({name})", e)
             for r in report.results for name, e in r["evaluations"].items() if e is not None and e.get("ci_family")]
    return max(found, key=lambda f: f[0]) if found else None


def finding(report: AuditReport) -> str:
    """One sentence saying exactly what the audit found: how many probes ran and are within chance, which are not,
    which could not run, the empty splits, and how wide the intervals are (so "within chance" on 4 questions reads
    as the little it says)."""
    n = len(report.results)
    flagged, missing = report.flagged, report.not_audited
    within = n - len(flagged) - len(missing)
    parts = [f"{within} of {n} probes ran and are within chance"]
    if flagged:
        parts.append(f"{len(flagged)} not within chance ({', '.join(flagged)})")
    if missing:
        parts.append(f"{len(missing)} not audited ({', '.join(missing)})")
    if report.empty_splits:
        parts.append(f"empty splits: {', '.join(report.empty_splits)}")
    widest = _widest(report)
    if widest is not None:
        half, where, e = widest
        wide = too_little_data(report)
        size = (f"{len(wide)} evaluation(s) rest on too little data to tell a shortcut from chance (a family "
                f"interval wider than +-{100 * MAX_HALF_WIDTH:.0f} points); " if wide else
                f"every family interval is within +-{100 * MAX_HALF_WIDTH:.0f} points; ")
        parts.append(size + f"the widest is {interval(e['ci_family'], ' - ')} ({where}, {e['total']} questions)")
    return "; ".join(parts) + "."
