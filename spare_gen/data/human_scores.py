"""Scoring people's answers (`spare-gen quiz`'s answers files): accuracy per task and protocol with Wilson intervals,
per person and pooled, and the time per question, beside the SPARE3D paper's human values.

An answers file has the columns ``ANSWER_COLUMNS`` (one row per answer; ``choice`` empty and ``timed_out`` 1 when
the time ran out). An answer counts as right when it came in time and chose the question's answer, read from the
dataset's own split tables, never from the answers file. Training answers (protocol ``trained``) are scored apart
from test answers: only test answers are set beside the paper. The paper reports the untrained people's *average*
and the trained people's *best*, so each (protocol, task) has both: ``pooled`` (every test answer together, the
average of the people when each answers as many questions) and ``best_person``.

``spare-gen evaluate OUT ANSWERS`` (a folder of answers files, e.g. ``OUT/quiz``, or one file) prints the table,
writes ``reports/humans.json`` and ``reports/human_answers.csv`` (every answer with its ``answer`` and ``correct``:
``pandas.read_csv`` it), and the dataset card's "Human performance" section.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import Counter, defaultdict
from pathlib import Path

from spare_gen.atomic import write_text
from spare_gen.data.evaluate import MULTIPLE_CHOICE, SHOWN_IDS
from spare_gen.data.human import human_reference
from spare_gen.data.human_protocol import PHASES, PROTOCOLS, Phase, Protocol  # noqa: F401 (also read from here)
from spare_gen.data.stats import CONFIDENCE, wilson
from spare_gen.data.tables import load_split
from spare_gen.stages.questions.schema import split_path
from spare_gen.store.inventory import REPORTS_DIR

REQUIRED_COLUMNS = ("person_id", "protocol", "phase", "position", "task", "split", "question_id", "choice",
                    "timed_out", "response_ms", "time_limit_s", "shown_at", "answered_at")
# The consent the person gave before the answer (empty without --consent): the SHA-256 of the consent file's bytes
# (`sha256sum consent.html` prints the same) and when they agreed. Files written before these columns lack them.
CONSENT_COLUMNS = ("consent_sha256", "consented_at")
ANSWER_COLUMNS = REQUIRED_COLUMNS + CONSENT_COLUMNS

HUMANS_REPORT = "humans.json"
HUMAN_ANSWERS = "human_answers.csv"
PAPER_KEY = {"untrained": "untrained_average", "trained": "trained_max"}  # what the paper reports per protocol


def is_answers_file(path: Path) -> bool:
    """Whether ``path`` is a folder (of answers files) or a CSV whose header is an answers file's."""
    path = Path(path)
    if path.is_dir():
        return True
    if not path.is_file():
        return False
    with open(path, newline="", encoding="utf-8-sig") as fh:
        header = next(csv.reader(fh), [])
    return "person_id" in header and "question_id" in header


def answer_files(path: Path) -> list[Path]:
    path = Path(path)
    if path.is_file():
        return [path]
    files = sorted(p for p in path.rglob("*.csv") if is_answers_file(p))
    if not files:
        raise FileNotFoundError(f"{path} has no answers files (*.csv with the columns {', '.join(ANSWER_COLUMNS[:4])}"
                                f", ...; `spare-gen quiz` writes them to OUT/quiz/<protocol>/answers/)")
    return files


def _problem(path: Path, what: str, bad: list[str]) -> str:
    more = f", ... ({len(bad) - SHOWN_IDS} more)" if len(bad) > SHOWN_IDS else ""
    return f"{path.name}: {len(bad)} {what} ({', '.join(bad[:SHOWN_IDS])}{more})"


def read_answers(path: Path) -> list[dict]:
    """Every answer of the files under ``path``, checked (ValueError naming the file and rows), typed."""
    rows = []
    for file in answer_files(path):
        with open(file, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{file}: header lacks column(s) {', '.join(missing)}")
            raw = list(reader)
        problems = []
        for what, test in (
            ("unknown protocols", lambda r: r["protocol"] not in PROTOCOLS),
            ("unknown phases", lambda r: r["phase"] not in PHASES),
            ("not multiple-choice tasks", lambda r: r["task"] not in {t.value for t in MULTIPLE_CHOICE}),
            ("bad choices", lambda r: not (r["choice"] == "" or r["choice"].isdigit())),
            ("bad timed_out", lambda r: r["timed_out"] not in ("0", "1")),
            ("bad response_ms", lambda r: not r["response_ms"].isdigit()),
            ("bad positions", lambda r: not r["position"].isdigit()),
        ):
            bad = [f"row {i + 2}: {r}" for i, r in enumerate(raw) if test(r)]
            if bad:
                problems.append(_problem(file, what, [b.split(":")[0] for b in bad]))
        if problems:
            raise ValueError("; ".join(problems))
        for r in raw:
            rows.append({**dict.fromkeys(CONSENT_COLUMNS, ""), **r, "position": int(r["position"]),
                         "choice": None if r["choice"] == "" else int(r["choice"]),
                         "timed_out": int(r["timed_out"]), "response_ms": int(r["response_ms"]), "file": file.name})
    seen = Counter((r["person_id"], r["protocol"], r["position"]) for r in rows)
    twice = Counter((r["person_id"], r["protocol"], r["question_id"]) for r in rows)
    repeated = sorted({f"{p}/{pr}/{q}" for (p, pr, q), n in twice.items() if n > 1}
                      | {f"{p}/{pr}/position {k}" for (p, pr, k), n in seen.items() if n > 1})
    if repeated:
        raise ValueError(_problem(Path(path), "answers stored twice (person/protocol/question)", repeated))
    return rows


def answer_key(out: Path, rows: list[dict]) -> dict[str, int]:
    """question_id -> answer of every (task, split) the rows name, from the dataset's split tables."""
    key: dict[str, int] = {}
    for task, split in sorted({(r["task"], r["split"]) for r in rows}):
        if not split_path(Path(out), task, split).is_file():
            raise FileNotFoundError(f"the answers name {task}/{split}, which {out} does not have")
        table = load_split(out, task, split, columns=["question_id", "answer"])
        key.update(zip(table.column("question_id").to_pylist(), table.column("answer").to_pylist()))
    unknown = sorted({r["question_id"] for r in rows} - set(key))
    if unknown:
        raise ValueError(_problem(Path(out), "question ids the dataset does not have", unknown))
    return key


def _seconds(values: list[int]) -> dict:
    return {"mean": statistics.fmean(values) / 1000, "median": statistics.median(values) / 1000} if values else {}


def score_answers(out: Path, path: Path) -> tuple[dict, list[dict]]:
    """The report (see the module docstring) and every answer with its ``answer`` and ``correct``."""
    rows = read_answers(path)
    key = answer_key(out, rows)
    for r in rows:
        r["answer"] = int(key[r["question_id"]])
        r["correct"] = int(not r["timed_out"] and r["choice"] == r["answer"])
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["protocol"], r["phase"], r["task"])].append(r)
    results = []
    for protocol in PROTOCOLS:
        for phase in PHASES:
            for task in MULTIPLE_CHOICE:
                group = groups.get((protocol, phase, task.value))
                if not group:
                    continue
                people = defaultdict(list)
                for r in group:
                    people[r["person_id"]].append(r)
                per_person = [{"person_id": p, **wilson(sum(x["correct"] for x in rs), len(rs)).to_dict(),
                               "seconds": _seconds([x["response_ms"] for x in rs])}
                              for p, rs in sorted(people.items())]
                best = max(per_person, key=lambda x: (x["accuracy"], x["total"]))
                paper = human_reference(task)
                results.append({
                    "protocol": protocol, "phase": phase, "task": task.value, "people": len(people),
                    "pooled": wilson(sum(r["correct"] for r in group), len(group)).to_dict(),
                    "person_mean": statistics.fmean(x["accuracy"] for x in per_person),
                    "best_person": {"person_id": best["person_id"], "accuracy": best["accuracy"],
                                    "ci": best["ci"], "total": best["total"]},
                    "seconds": _seconds([r["response_ms"] for r in group]),
                    "timed_out": sum(r["timed_out"] for r in group),
                    "paper": getattr(paper, PAPER_KEY[protocol]) if paper and phase == "test" else None,
                    "per_person": per_person,
                })  # fmt: skip
    report = {"answers": str(path), "confidence": CONFIDENCE, "n_answers": len(rows),
              "people": len({(r["protocol"], r["person_id"]) for r in rows}), "results": results}
    return report, rows


def results_by_task(report: dict) -> dict[tuple[str, str], dict]:
    """(protocol, task) -> the result of its test answers."""
    return {(r["protocol"], r["task"]): r for r in report["results"] if r["phase"] == "test"}


def _pct(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f} %"


def format_report(report: dict) -> str:
    """A text table: one pooled line per (protocol, phase, task), each followed by its people's own lines."""
    lines = [f"{report['n_answers']} answers of {report['people']} people ({report['answers']})",
             f"{'protocol':<10}{'phase':<9}{'task':<25}{'people':>7}{'answers':>8}{'accuracy':>10}   95% CI"
             f"{'':<9}{'best':>8}{'s/question':>11}{'paper':>8}"]
    for r in report["results"]:
        a = r["pooled"]
        ci = f"[{_pct(a['ci'][0])}, {_pct(a['ci'][1])}]"
        lines.append(f"{r['protocol']:<10}{r['phase']:<9}{r['task']:<25}{r['people']:>7}{a['total']:>8}"
                     f"{_pct(a['accuracy']):>10}   {ci:<24}{_pct(r['best_person']['accuracy']):>8}"
                     f"{r['seconds'].get('median', float('nan')):>11.1f}{_pct(r['paper']):>8}")
        for p in r["per_person"]:
            ci = f"[{_pct(p['ci'][0])}, {_pct(p['ci'][1])}]"
            lines.append(f"{'':<19}{'person ' + p['person_id']:<32}{p['total']:>8}{_pct(p['accuracy']):>10}   "
                         f"{ci:<24}{'':>8}{p['seconds'].get('median', float('nan')):>11.1f}")
    lines.append("pooled: every answer of the task together; person lines: each person's own answers. paper: SPARE3D's "
                 "untrained average (untrained) and trained best (trained), on its own questions")
    return "\n".join(lines)


def write_answers_csv(path: Path, rows: list[dict]) -> None:
    buffer = io.StringIO()
    columns = [*ANSWER_COLUMNS, "answer", "correct"]
    writer = csv.DictWriter(buffer, columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in sorted(rows, key=lambda r: (r["protocol"], r["person_id"], r["position"])):
        writer.writerow({**r, "choice": "" if r["choice"] is None else r["choice"]})
    write_text(path, buffer.getvalue())


def report_paths(out: Path) -> tuple[Path, Path]:
    return Path(out) / REPORTS_DIR / HUMANS_REPORT, Path(out) / REPORTS_DIR / HUMAN_ANSWERS
