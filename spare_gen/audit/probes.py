"""``spare-gen audit``: question-blind probes per multiple-choice task; can they pick the answer above chance?

A probe never sees the F, R, T drawings or the query pose, only the answer side:

* ``line_stats`` - conditional logit on per-drawing statistics (ink, line counts and lengths, hidden
  shares, extent, bbox aspect; ``spare_gen.audit.features``);
* ``pixels_16`` - conditional logit on 16 x 16 grey thumbnails;
* ``answer_position`` - always the most frequent training answer (position bias); test evaluation
  only: holding questions out of an exactly balanced answer set makes the held-out answer the rarer
  one in training, so a cross-validated majority guess scores below chance by construction;
* ``paths``, ``file_order``, ``metadata``, ``file_bytes`` - what a model sees besides pixels (file
  paths and names, where files sort, exposed columns, file sizes and bytes; ``spare_gen.audit.surface``).
  These may match a choice against the question's own values (a file named after the query pose).

An evaluation that cannot run (an empty split, too few questions) makes its probe "not audited",
never "within chance"; ``main`` then exits 3 (1 when a probe is not within chance, 2 on bad input).

For three_view_to_isometric and pose_to_isometric a probe scores each candidate drawing with shared
weights and picks the argmax of the 4; for isometric_to_pose (one drawing, 4 pose choices) it is a
multinomial classifier of the isometric drawing alone.

Two evaluations per probe: ``test`` (fitted on the train split, scored on the test split) and ``cv``
(5-fold cross-validation over the questions of all splits, folds stratified by answer, every
prediction out of fold: more power when the test split is small; no model is shared between
questions, so folds do not leak).
Beside them, view-aware probes (``spare_gen.audit.learnability``, the report's ``view_aware``) show the other
half: that a learner seeing the F, R, T drawings picks the answer more often than the same learner without them.

Verdict: the Wilson interval of each evaluation's accuracy at a family-wise 95% level (Bonferroni
over every evaluation that ran, so an unbiased dataset raises a false alarm in at most 5% of audits);
a probe is "within chance" when every interval contains the chance level 1/4. Plain 95% intervals
are reported too. Randomness (folds) comes from derive_rng(seed, "audit", task, probe[, "cv"]).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from spare_gen.atomic import write_json
from spare_gen.audit import logit
from spare_gen.audit.features import LAYOUT, FeatureKind, Layout
from spare_gen.audit.inputs import Source, join_split_data, probe_split_data
from spare_gen.audit.learnability import view_aware
from spare_gen.audit.report import AuditReport
from spare_gen.audit.surface import TOKEN_PROBES, SurfaceProbe, TokenLookup, empty_splits, task_columns
from spare_gen.config.schema import TaskName
from spare_gen.console import progress
from spare_gen.data.evaluate import MULTIPLE_CHOICE, REPORTS_DIR
from spare_gen.data.stats import CONFIDENCE, wilson
from spare_gen.data.tables import available_tasks
from spare_gen.stages.questions.schema import split_path
from spare_gen.stages.questions.tasks import SPLITS, dataset_choices
from spare_gen.rng import derive_rng

TRAIN, TEST = "train", "test"
MIN_TRAIN = 8  # training questions a probe needs (also per cross-validation fold)
FAMILY_CONFIDENCE = 0.95
AUDIT_ROWS_PER_TASK = 256  # questions whose drawing features one Dask task reads (a large split spreads out)
REPORT_NAME = "audit.json"


class Probe(str, Enum):
    LINE_STATS = "line_stats"
    PIXELS = "pixels_16"
    ANSWER_POSITION = "answer_position"
    PATHS = SurfaceProbe.PATHS.value
    FILE_ORDER = SurfaceProbe.FILE_ORDER.value
    METADATA = SurfaceProbe.METADATA.value
    FILE_BYTES = SurfaceProbe.FILE_BYTES.value


class Evaluation(str, Enum):
    TEST = "test"  # train split -> test split
    CV = "cv"  # k-fold over all splits


class Verdict(str, Enum):
    WITHIN = "within_chance"
    ABOVE = "above_chance"
    BELOW = "below_chance"
    NOT_AUDITED = "not_audited"  # an evaluation could not run (empty split, too few questions): never "within"


FEATURES = {Probe.LINE_STATS: FeatureKind.STATS, Probe.PIXELS: FeatureKind.PIXELS,
            Probe.ANSWER_POSITION: FeatureKind.STATS}
SURFACE = {p: SurfaceProbe(p.value) for p in Probe if p.value in {s.value for s in SurfaceProbe}}
EXIT_OK, EXIT_FLAGGED, EXIT_ERROR, EXIT_NOT_AUDITED = 0, 1, 2, 3


def fit_predict(probe: Probe, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, layout: Layout,
                n_choices: int, rng: np.random.Generator) -> np.ndarray:
    """Test predictions of ``probe`` fitted on the training questions."""
    if probe is Probe.ANSWER_POSITION:  # the most frequent training answer (the lowest index on ties)
        return np.full(len(x_test), int(np.argmax(np.bincount(y_train, minlength=n_choices))))
    if probe in SURFACE and SURFACE[probe] in TOKEN_PROBES:
        return TokenLookup().fit(x_train, y_train).predict(x_test, rng)
    scaler = logit.Standardizer.fit(x_train)
    x_train, x_test = scaler(x_train), scaler(x_test)
    if layout is Layout.CLASSES:
        x_train, x_test = logit.class_design(x_train, n_choices), logit.class_design(x_test, n_choices)
    l2 = logit.choose_l2(x_train, y_train, rng)
    return logit.predict(x_test, logit.fit(x_train, y_train, l2))


def cross_validated(probe: Probe, x: np.ndarray, y: np.ndarray, layout: Layout, n_choices: int,
                    rng: np.random.Generator, folds: int = logit.CV_FOLDS) -> np.ndarray:
    """Out-of-fold predictions for every question."""
    fold = logit.stratified_folds(y, folds, rng)
    pred = np.empty(len(y), dtype=np.int64)
    for f in range(folds):
        held = fold == f
        pred[held] = fit_predict(probe, x[~held], y[~held], x[held], layout, n_choices, rng)
    return pred


def run_probe(task: TaskName, probe: Probe, data: dict[str, tuple[np.ndarray, np.ndarray]], seed: int,
              n_choices: int) -> dict:
    """One probe's raw counts per evaluation (None when there are too few questions); verdicts come later.

    BLAS runs on one thread, in a Dask worker or not: the fits' last bits, hence the report's bytes, then do not
    depend on where the probe ran or on the machine's core count."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _run_probe(task, probe, data, seed, n_choices)


def _run_probe(task: TaskName, probe: Probe, data: dict[str, tuple[np.ndarray, np.ndarray]], seed: int,
               n_choices: int) -> dict:
    """``n_choices``: the dataset's choices per question (``dataset_choices``)."""
    layout = LAYOUT[task]
    (x_train, y_train), (x_test, y_test) = data[TRAIN], data[TEST]
    x_all = np.concatenate([data[s][0] for s in SPLITS])
    y_all = np.concatenate([data[s][1] for s in SPLITS])
    counts: dict[str, dict | None] = {Evaluation.TEST.value: None, Evaluation.CV.value: None}
    not_audited: dict[str, str] = {}
    if len(y_train) >= MIN_TRAIN and len(y_test):
        pred = fit_predict(probe, x_train, y_train, x_test, layout, n_choices,
                           derive_rng(seed, "audit", task.value, probe.value))
        counts[Evaluation.TEST.value] = {"correct": int((pred == y_test).sum()), "total": int(len(y_test))}
    else:
        not_audited[Evaluation.TEST.value] = (
            "test split empty" if not len(y_test) else f"{len(y_train)} training questions (needs {MIN_TRAIN})")
    cv_train = len(y_all) * (logit.CV_FOLDS - 1) // logit.CV_FOLDS
    if probe is not Probe.ANSWER_POSITION and cv_train >= MIN_TRAIN:
        pred = cross_validated(probe, x_all, y_all, layout, n_choices,
                               derive_rng(seed, "audit", task.value, probe.value, Evaluation.CV.value))
        counts[Evaluation.CV.value] = {"correct": int((pred == y_all).sum()), "total": int(len(y_all))}
    elif probe is not Probe.ANSWER_POSITION:  # answer_position has no cv evaluation by design (module docstring)
        not_audited[Evaluation.CV.value] = f"{len(y_all)} questions in all splits (needs {MIN_TRAIN} per fold)"
    return {"task": task.value, "probe": probe.value, "chance": 1.0 / n_choices,
            "n": {s: int(len(data[s][1])) for s in SPLITS}, "evaluations": counts, "not_audited": not_audited}


def judge(results: list[dict], family_confidence: float = FAMILY_CONFIDENCE) -> float:
    """Add intervals and verdicts in place; return the per-evaluation confidence of the family-wise level."""
    ran = [e for r in results for e in r["evaluations"].values() if e is not None]
    level = 1.0 - (1.0 - family_confidence) / max(len(ran), 1)
    for r in results:
        verdicts = []
        for e in r["evaluations"].values():
            if e is None:
                continue
            plain, family = wilson(e["correct"], e["total"], CONFIDENCE), wilson(e["correct"], e["total"], level)
            verdict = (Verdict.ABOVE if family.low > r["chance"] else Verdict.BELOW if family.high < r["chance"]
                       else Verdict.WITHIN)
            e.update(accuracy=plain.value, ci95=[plain.low, plain.high], ci_family=[family.low, family.high],
                     verdict=verdict.value)
            verdicts.append(verdict)
        # a shortcut found by one evaluation is a finding; otherwise one that could not run leaves the probe
        # "not audited" (never "within chance")
        r["verdict"] = (Verdict.ABOVE if Verdict.ABOVE in verdicts else Verdict.BELOW if Verdict.BELOW in verdicts
                        else Verdict.NOT_AUDITED if r.get("not_audited") or not verdicts else Verdict.WITHIN).value
    return level


def audit(out: Path, seed: int = 0, client=None, show: bool = False) -> AuditReport:
    """Run every probe on every multiple-choice task present in ``out``; the report. ``show``: progress
    per fitted probe on stderr (a bar on a terminal, periodic lines in a log).

    With a Dask ``client``, the probes' inputs are read on its workers, one task per (task, split, feature set),
    or per AUDIT_ROWS_PER_TASK questions of a larger split's drawings, and each probe's fit runs there on them: the
    client only plans and merges the small results. Without one, everything runs here: the same report either way."""
    out = Path(out)
    tasks = [t for t in available_tasks(out) if t in MULTIPLE_CHOICE]
    if not tasks:
        raise FileNotFoundError(f"no multiple-choice question sets under {out / 'questions'} (run the question stage)")
    inputs: dict[tuple, object] = {}  # (task, split, source) -> (x, answers), or its future on the workers

    def split_data(task: TaskName, split: str, source: Source):
        key = (task, split, source)
        if key in inputs:
            return inputs[key]
        if client is None:
            inputs[key] = probe_split_data(out, task, split, source)
            return inputs[key]
        path = split_path(out, task.value, split)
        n = pq.read_metadata(path).num_rows if isinstance(source, FeatureKind) and path.is_file() else 0
        if n <= AUDIT_ROWS_PER_TASK:
            inputs[key] = client.submit(probe_split_data, out, task, split, source, pure=False)
        else:  # a large split's drawings are read on every worker, AUDIT_ROWS_PER_TASK questions a task
            parts = [client.submit(probe_split_data, out, task, split, source, (a, min(a + AUDIT_ROWS_PER_TASK, n)),
                                   pure=False) for a in range(0, n, AUDIT_ROWS_PER_TASK)]
            inputs[key] = client.submit(join_split_data, *parts, pure=False)
        return inputs[key]

    jobs, excluded = [], {}  # per probe: its result, or its future on the client
    for task in tasks:
        columns, n_choices = task_columns(out, task, SPLITS), dataset_choices(out, task)
        if columns is not None:
            excluded[task.value] = columns.excluded
        for probe in Probe:
            if probe in SURFACE and columns is None:
                continue
            source = SURFACE[probe] if probe in SURFACE else FEATURES[probe]
            jobs.append((task, probe, {s: split_data(task, s, source) for s in SPLITS}, n_choices))
    results = _fit(jobs, seed, client, progress(len(jobs), "audit", "probe", show))
    level = judge(results)
    learnable = view_aware(out, tasks, seed, client)  # the views against blind, per task
    return AuditReport(
        seed=seed, family_confidence=FAMILY_CONFIDENCE, per_evaluation_confidence=level, confidence=CONFIDENCE,
        min_train=MIN_TRAIN, cv_folds=logit.CV_FOLDS, results=results, empty_splits=empty_splits(out, tasks, SPLITS),
        answer_key_columns=excluded,
        flagged=[f"{r['task']}/{r['probe']}" for r in results
                 if r["verdict"] in (Verdict.ABOVE.value, Verdict.BELOW.value)],
        not_audited=[f"{r['task']}/{r['probe']}" for r in results if r["verdict"] == Verdict.NOT_AUDITED.value],
        view_aware=learnable)


def _fit(jobs: list[tuple], seed: int, client, bar) -> list[dict]:
    """Each (task, probe, data, n_choices) job's result, in order; on ``client``'s workers when given (the inputs stay there:
    each fit's task depends on their futures)."""
    if client is None:
        results = []
        for task, probe, data, n_choices in jobs:
            results.append(run_probe(task, probe, data, seed, n_choices))
            bar.update(1)
    else:
        from distributed import as_completed

        futures = [client.submit(run_probe, task, probe, data, seed, n_choices, pure=False)
                   for task, probe, data, n_choices in jobs]
        for _ in as_completed(futures):
            bar.update(1)
        results = client.gather(futures)
    bar.close()
    return results


def exit_code(report: AuditReport) -> int:
    """1 when a probe is not within chance, else 3 when one could not run, else 0."""
    if report.flagged:
        return EXIT_FLAGGED
    return EXIT_NOT_AUDITED if report.not_audited else EXIT_OK


def audit_and_record(out: Path, seed: int = 0, client=None, show: bool = False) -> tuple[AuditReport, Path]:
    """Run the audit (its fits on ``client``'s workers when given) and write ``reports/audit.json``; (report, json)."""
    report = audit(Path(out), seed, client, show)
    return report, write_json(Path(out) / REPORTS_DIR / REPORT_NAME, report.as_json())
