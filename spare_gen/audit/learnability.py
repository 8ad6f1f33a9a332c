"""View-aware probes: can the answer be learned from the question's inputs, beyond what the choices alone give?

The question-blind probes (``spare_gen.audit.probes``) show that the answer cannot be read from the choices alone.
These show the other half: a small non-linear learner that also sees the three views picks the answer more often
than the same learner without them. Per multiple-choice task:

* every drawing is reduced to ``FEATURE_NAMES`` (29 cheap geometric features of its 64 x 64 grey raster: ink,
  ink centroid and spread, ink per quadrant and per third, ink bounding box, edge directions);
* ``views`` sees the F, R, T drawings (and, for pose_to_isometric, the query pose) and the choice; ``blind`` the
  choice alone. A candidate task scores each candidate with one binary classifier (its features, its difference
  from the question's mean candidate and, for ``views``, the candidate minus each view, and the query pose) and
  picks the argmax; isometric_to_pose classifies the isometric drawing (for ``views`` with its differences from
  each view) among the pose choices;
* the learner is scikit-learn's HistGradientBoostingClassifier (fixed settings ``LEARNER``, no early stopping, one
  thread), under the same grouped ``FOLDS``-fold cross-validation for both (groups: the model id, so no model is
  on both sides of a fold), over at most ``MAX_QUESTIONS`` questions of all splits;
* reported: each accuracy with its Wilson interval, the paired difference views minus blind over the same
  questions with a normal interval, and a control with the answers shuffled among the questions, where views
  must fall to blind (both near chance).

What it says: the drawings carry the answer in a form cheap features can learn (a misaligned view or a wrong
label makes views fall to blind). What it does not say: that a network will learn it, nor how hard the task is;
views at chance on a task does not prove the views useless, only that these features miss what links them.
Randomness (subsample, folds, shuffle, the learner's seed) comes from derive_rng(seed, "audit", "view_aware", task).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from scipy.special import ndtri

from spare_gen.audit.features import LAYOUT, Layout
from spare_gen.config.schema import TaskName
from spare_gen.data.stats import CONFIDENCE, wilson
from spare_gen.data.tables import Kind, load_rows
from spare_gen.rng import derive_rng, derive_seed
from spare_gen.stages.questions.schema import ANSWER_COLUMN, POSE_COLUMN, THREE_VIEW_PREFIXES, QuestionCommon, split_path
from spare_gen.stages.questions.tasks import SPLITS, TASK_SPECS, dataset_choices
from spare_gen.store.packed import drawing_bytes

IMAGE_SIDE = 64
INK_THRESHOLD = 0.1  # darkness above this: an inked pixel (the bounding box)
EDGE_BINS = 8  # gradient directions over [0, pi)
MAX_QUESTIONS = 2000  # per task, drawn at random from all splits when there are more
MIN_QUESTIONS = 500  # fewer: too little data to tell views from blind (a warning)
FOLDS = 5
MIN_PER_FOLD = 8  # fewer questions than FOLDS x this: the task is not audited
# small trees on coarse bins: a fit of 2000 questions takes well under a CPU second
LEARNER = {"max_iter": 50, "learning_rate": 0.1, "max_leaf_nodes": 8, "min_samples_leaf": 10, "max_bins": 32,
           "l2_regularization": 1.0, "early_stopping": False}
VIEWS, BLIND = "views", "blind"
FEATURE_NAMES = (
    "ink", "centroid_x", "centroid_y", "spread_x", "spread_y", "spread_xy",
    "quadrant_tl", "quadrant_tr", "quadrant_bl", "quadrant_br",
    "bbox_left", "bbox_top", "bbox_right", "bbox_bottom", "log_bbox_aspect",
    "rows_top", "rows_middle", "rows_bottom", "columns_left", "columns_middle", "columns_right",
    *(f"edges_{k}" for k in range(EDGE_BINS)),
)


def drawing_features(data: bytes, side: int = IMAGE_SIDE) -> np.ndarray:
    """The FEATURE_NAMES of one drawing (its PNG bytes), on its side x side grey raster (darkness = 1 - grey)."""
    with Image.open(io.BytesIO(data)) as im:
        return image_features(im, side)


def image_features(image: Image.Image, side: int = IMAGE_SIDE) -> np.ndarray:
    """The FEATURE_NAMES of one drawing as a Pillow image (its RGB pixels: the same numbers as from its PNG)."""
    grey = image.convert("L").resize((side, side), Image.Resampling.BOX)
    d = 1.0 - np.asarray(grey, dtype=np.float64) / 255.0
    total = d.sum()
    coords = (np.arange(side) + 0.5) / side
    if total <= 0:
        return np.zeros(len(FEATURE_NAMES))
    rows, cols = d.sum(axis=1) / total, d.sum(axis=0) / total
    cy, cx = float(rows @ coords), float(cols @ coords)
    sy, sx = float(np.sqrt(rows @ (coords - cy) ** 2)), float(np.sqrt(cols @ (coords - cx) ** 2))
    sxy = float(((coords[:, None] - cy) * (coords[None, :] - cx) * d).sum() / total)
    h = side // 2
    quadrants = [d[:h, :h].sum(), d[:h, h:].sum(), d[h:, :h].sum(), d[h:, h:].sum()]
    inked = d > INK_THRESHOLD
    ink_rows, ink_cols = np.flatnonzero(inked.any(axis=1)), np.flatnonzero(inked.any(axis=0))
    if len(ink_rows):
        top, bottom, left, right = ink_rows[0] / side, (ink_rows[-1] + 1) / side, ink_cols[0] / side, \
            (ink_cols[-1] + 1) / side
    else:
        top = bottom = left = right = 0.5
    thirds = np.array_split(np.arange(side), 3)
    gy, gx = np.gradient(d)
    magnitude = np.hypot(gx, gy)
    angle = np.mod(np.arctan2(gy, gx), np.pi)
    edges = np.bincount(np.minimum((angle / np.pi * EDGE_BINS).astype(np.int64), EDGE_BINS - 1).ravel(),
                        weights=magnitude.ravel(), minlength=EDGE_BINS)
    edges = edges / max(edges.sum(), 1e-12)
    return np.array([
        d.mean(), cx, cy, sx, sy, sxy, *(q / total for q in quadrants),
        left, top, right, bottom, np.log((right - left + 1e-3) / (bottom - top + 1e-3)),
        *(rows[t].sum() for t in thirds), *(cols[t].sum() for t in thirds), *edges,
    ], dtype=np.float64)


@dataclass(frozen=True)
class TaskInputs:
    """One task's questions (all splits, at most MAX_QUESTIONS): per-drawing features, answers, model ids.

    ``views`` (n, 3, d): F, R, T; ``choices`` (n, k, d): the candidates, or (n, 1, d) the isometric drawing of a
    classes task; ``pose`` (n,): the query pose (pose_to_isometric) or None."""

    task: TaskName
    views: np.ndarray
    choices: np.ndarray
    answers: np.ndarray
    groups: np.ndarray
    pose: np.ndarray | None
    n_choices: int
    available: int  # questions in all splits before the cap


def _question_columns(task: TaskName) -> list[str]:
    spec = TASK_SPECS[task]
    columns = [ANSWER_COLUMN, "model_id", *(f"{p}_{Kind.PNG.value}" for p in THREE_VIEW_PREFIXES.values()),
               f"{spec.answer_side_prefix}_{Kind.PNG.value}"]
    return columns + ([POSE_COLUMN] if spec.loader.pose == POSE_COLUMN else [])


def read_inputs(out: Path, task: TaskName, seed: int) -> TaskInputs | str:
    """The task's questions of every split (a seeded subsample of MAX_QUESTIONS when there are more), featurised;
    the reason instead when some question has no F, R, T drawing (nothing to compare with)."""
    out = Path(out)
    rows: list[QuestionCommon] = []
    for split in SPLITS:
        if split_path(out, task.value, split).is_file():
            rows.extend(load_rows(out, task, split, _question_columns(task)))
    available = len(rows)
    if available > MAX_QUESTIONS:
        keep = np.sort(derive_rng(seed, "audit", "view_aware", task.value, "subsample").choice(
            available, MAX_QUESTIONS, replace=False))
        rows = [rows[i] for i in keep]
    png = Kind.PNG.value
    missing = sum(1 for r in rows if not all(r.three_views(png).values()))
    if missing:
        return f"{missing} of {len(rows)} questions without their F, R, T drawings"
    spec = TASK_SPECS[task]
    side = str(spec.answer_side_prefix)
    cache: dict[str, np.ndarray] = {}

    def feats(rel: str) -> np.ndarray:
        if rel not in cache:
            cache[rel] = drawing_features(drawing_bytes(out, rel))
        return cache[rel]

    d = len(FEATURE_NAMES)
    views = np.array([[feats(rel) for rel in r.three_views(png).values()] for r in rows],
                     dtype=np.float64).reshape(len(rows), 3, d)
    if LAYOUT[task] is Layout.CANDIDATES:
        choices = np.array([[feats(p) for p in r.drawing(side, png)] for r in rows],
                           dtype=np.float64).reshape(len(rows), -1, d)
    else:
        choices = np.array([[feats(r.drawing(side, png))] for r in rows], dtype=np.float64).reshape(len(rows), 1, d)
    pose = (np.array([spec.loader.query_pose(r) for r in rows], dtype=np.float64)
            if spec.loader.pose == POSE_COLUMN else None)
    return TaskInputs(task, views, choices, np.array([r.correct_answer() for r in rows], dtype=np.int64),
                      np.array([r.model_id for r in rows], dtype=object), pose, dataset_choices(out, task),
                      available)


def design(inputs: TaskInputs, sees_views: bool) -> np.ndarray:
    """Rows to fit: (n, k, f) per candidate for a candidate task, (n, f) per question for a classes task."""
    c, v = inputs.choices, inputs.views
    n, k, d = c.shape
    if LAYOUT[inputs.task] is Layout.CLASSES:
        parts = [c[:, 0]]
        if sees_views:
            parts.append((c[:, :1] - v).reshape(n, -1))
        return np.concatenate(parts, axis=1)
    parts = [c, c - c.mean(axis=1, keepdims=True)]
    if sees_views:
        parts.append((c[:, :, None, :] - v[:, None, :, :]).reshape(n, k, 3 * d))
        if inputs.pose is not None:
            parts.append(np.broadcast_to(inputs.pose.reshape(n, 1, 1), (n, k, 1)))
    return np.concatenate(parts, axis=2)


def grouped_folds(groups: np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold index per question: each group (model id) whole in one fold; the largest groups first (equal sizes in
    seeded order), each to the smallest fold so far (the lowest index on ties)."""
    names, inverse, sizes = np.unique(groups.astype(str), return_inverse=True, return_counts=True)
    fold_of_group = np.empty(len(names), dtype=np.int64)
    filled = np.zeros(folds, dtype=np.int64)
    order = rng.permutation(len(names))
    for g in order[np.argsort(-sizes[order], kind="stable")]:
        f = int(np.argmin(filled))
        fold_of_group[g] = f
        filled[f] += sizes[g]
    return fold_of_group[inverse]


def fit_predict(x_train: np.ndarray, answers: np.ndarray, x_held: np.ndarray, n_choices: int, seed: int
                ) -> np.ndarray:
    """The learner fitted on ``x_train`` (rows of ``design``) and ``answers``, its choice per row of ``x_held``: the
    highest-scoring candidate, or the most probable class."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(**LEARNER, random_state=seed)
    if x_train.ndim == 3:  # candidates: one binary classifier on every (question, candidate) row
        n, k, width = x_train.shape
        is_answer = (np.arange(k)[None, :] == answers[:, None]).astype(np.int64)
        model.fit(x_train.reshape(-1, width), is_answer.ravel())
        return np.argmax(model.predict_proba(x_held.reshape(-1, width))[:, 1].reshape(-1, k), axis=1)
    model.fit(x_train, answers)
    proba = np.zeros((len(x_held), n_choices))
    proba[:, model.classes_] = model.predict_proba(x_held)
    return np.argmax(proba, axis=1)


def predictions(inputs: TaskInputs, x: np.ndarray, answers: np.ndarray, fold: np.ndarray, seed: int) -> np.ndarray:
    """Out-of-fold choice per question: the highest-scoring candidate, or the most probable class."""
    pred = np.zeros(len(answers), dtype=np.int64)
    for f in range(int(fold.max()) + 1):
        held, train = fold == f, fold != f
        if not held.any():
            continue
        pred[held] = fit_predict(x[train], answers[train], x[held], inputs.n_choices, seed + f)
    return pred


def _accuracy(correct: np.ndarray) -> dict:
    a = wilson(int(correct.sum()), len(correct), CONFIDENCE)
    return {"correct": a.correct, "total": a.total, "accuracy": a.value, "ci95": [a.low, a.high]}


def paired_difference(views: np.ndarray, blind: np.ndarray) -> dict:
    """Views minus blind accuracy over the same questions, with its normal 95% interval (per-question differences)."""
    diff = views.astype(np.float64) - blind.astype(np.float64)
    n = len(diff)
    mean = float(diff.mean())
    half = float(ndtri(0.5 + 0.5 * CONFIDENCE) * diff.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    return {"mean": mean, "ci95": [mean - half, mean + half]}


def _compare(inputs: TaskInputs, answers: np.ndarray, fold: np.ndarray, seed: int) -> dict:
    correct = {name: predictions(inputs, design(inputs, name == VIEWS), answers, fold, seed) == answers
               for name in (VIEWS, BLIND)}
    return {VIEWS: _accuracy(correct[VIEWS]), BLIND: _accuracy(correct[BLIND]),
            "difference": paired_difference(correct[VIEWS], correct[BLIND])}


def view_aware_task(out: Path, task: TaskName, seed: int) -> dict:
    """One task's views-against-blind result (``not_audited`` with its reason when too few questions)."""
    # sklearn (and the OpenMP runtime it loads) before the thread limit: a runtime loaded inside the limit escapes it
    # and its idle threads spin on every core (ten times the CPU seconds on a busy machine)
    import sklearn.ensemble  # noqa: F401
    from threadpoolctl import threadpool_limits

    inputs = read_inputs(out, task, seed)
    if isinstance(inputs, str):
        return {"task": task.value, "not_audited": inputs}
    n = len(inputs.answers)
    result = {"task": task.value, "questions": n, "available": inputs.available,
              "chance": 1.0 / max(inputs.n_choices, 1)}
    if n < FOLDS * MIN_PER_FOLD or len(np.unique(inputs.groups.astype(str))) < FOLDS:
        result["not_audited"] = f"{n} questions (needs {FOLDS * MIN_PER_FOLD}: {MIN_PER_FOLD} per fold)"
        return result
    rng = derive_rng(seed, "audit", "view_aware", task.value)
    fold = grouped_folds(inputs.groups, FOLDS, rng)
    learner_seed = derive_seed(seed, "audit", "view_aware", task.value, "learner") % (2 ** 31)
    with threadpool_limits(1):  # one thread: the fits' bits do not depend on the machine
        result.update(_compare(inputs, inputs.answers, fold, learner_seed))
        shuffled = rng.permutation(inputs.answers)
        result["shuffled"] = _compare(inputs, shuffled, fold, learner_seed)
    result["views_above_blind"] = bool(result["difference"]["ci95"][0] > 0)
    return result


def view_aware(out: Path, tasks: list[TaskName], seed: int, client=None) -> dict:
    """The ``view_aware`` section of reports/audit.json: one result per multiple-choice task (on ``client``'s
    workers when given; the same result either way)."""
    if client is None:
        results = [view_aware_task(out, t, seed) for t in tasks]
    else:
        results = client.gather([client.submit(view_aware_task, Path(out), t, seed, pure=False) for t in tasks])
    return {"learner": "HistGradientBoostingClassifier", "settings": dict(LEARNER), "features": list(FEATURE_NAMES),
            "image_side": IMAGE_SIDE, "cv_folds": FOLDS, "groups": "model_id", "max_questions": MAX_QUESTIONS,
            "min_questions": MIN_QUESTIONS, "confidence": CONFIDENCE, "results": results}
