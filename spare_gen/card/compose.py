"""Write the dataset card once, from the question summary, the pool tables, the bias audit and the human scores."""

from __future__ import annotations

import json
from pathlib import Path

from spare_gen.atomic import write_text
from spare_gen.audit.probes import REPORT_NAME
from spare_gen.audit.report import AuditReport
from spare_gen.card.audit import BEGIN, END, section_text
from spare_gen.card.dataset import CARD_NAME, card_text, replace_marked
from spare_gen.card import humans
from spare_gen.config.schema import Config
from spare_gen.data.evaluate import REPORTS_DIR
from spare_gen.data.human_scores import HUMANS_REPORT
from spare_gen.hub.pack import write_hf_tables
from spare_gen.stages.questions.schema import QUESTIONS_DIR, SUMMARY_NAME, QuestionsSummary


def write_card(out: Path, config: Config, client=None) -> Path | None:
    """The card and the image-embedded Hugging Face tables it declares (packed on the ``client``'s workers if
    given); None where no question stage has run."""
    out = Path(out)
    summary_path = out / QUESTIONS_DIR / SUMMARY_NAME
    if not summary_path.is_file():
        return None
    summary = QuestionsSummary.read(summary_path)
    splits = write_hf_tables(out, list(summary.produced), client)
    text = card_text(config, summary, out, splits)
    report_path = out / REPORTS_DIR / REPORT_NAME
    if report_path.is_file():
        text = replace_marked(text, BEGIN, END, section_text(AuditReport.read(report_path)))
    humans_path = out / REPORTS_DIR / HUMANS_REPORT
    if humans_path.is_file():
        text = replace_marked(text, humans.BEGIN, humans.END,
                              humans.section_text(json.loads(humans_path.read_text(encoding="utf-8")), out))
    return write_text(out / CARD_NAME, text)


def write_audit_section(out: Path, report: AuditReport) -> Path:
    """Replace (or append) the card's bias-audit section, keeping the rest of the card as it is."""
    path = Path(out) / CARD_NAME
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return write_text(path, replace_marked(text, BEGIN, END, section_text(report)))


def write_humans_section(out: Path, report: dict) -> Path:
    """Replace (or append) the card's human-performance section, keeping the rest of the card as it is."""
    path = Path(out) / CARD_NAME
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return write_text(path, replace_marked(text, humans.BEGIN, humans.END, humans.section_text(report, out)))


def remove_humans_section(out: Path) -> Path | None:
    """Take the human-performance section out of the card (nobody's answers are left); the card, or None."""
    path = Path(out) / CARD_NAME
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    start, stop = text.find(humans.BEGIN), text.find(humans.END)
    if start == -1 or stop < start:
        return None
    return write_text(path, text[:start].rstrip("\n") + "\n" + text[stop + len(humans.END):].lstrip("\n"))
