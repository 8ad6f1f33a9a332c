"""The validator's rule checks: each takes the loaded dataset and returns one line per violation."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image

from spare_gen.config.schema import ModelReuse, TaskName
from spare_gen.store.packed import drawing_bytes, drawing_exists
from spare_gen.stages.questions.dataset import LoadedDataset, question_id
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.schema import QuestionCommon
from spare_gen.stages.questions.publish.files import dataset_sha256
from spare_gen.stages.questions.select import split_ratio, split_sizes
from spare_gen.stages.questions.tasks import TASK_SPECS

SVG_SIZE = re.compile(rb'<svg[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"')


def check_files(ds: LoadedDataset) -> list[str]:
    """Every referenced file is recorded in the manifest, exists, and has the recorded hash."""
    bad = []
    for task, _, row in ds.all_rows():
        for p in row.paths():
            if p in ds.actual_sha:
                continue
            actual = None if Path(p).is_absolute() or ".." in Path(p).parts else dataset_sha256(ds.out, p)
            if Path(p).is_absolute() or ".." in Path(p).parts:
                bad.append(f"files: {question_id(row)} names {p!r}, which is not a path inside the dataset")
            elif p not in ds.manifest:
                bad.append(f"files: {question_id(row)} names {p!r}, which has no recorded hash in "
                           "questions/files.parquet")
            elif actual is None:
                bad.append(f"files: {question_id(row)} names {p!r}, which does not exist")
            else:
                ds.actual_sha[p] = actual
                if ds.actual_sha[p] != ds.manifest[p]:
                    bad.append(f"files: {p!r} has SHA-256 {ds.actual_sha[p][:12]}..., recorded "
                               f"{ds.manifest[p][:12]}... (edited after generation)")
                source = ds.source(p)
                copied = source == p or dataset_sha256(ds.out, source) == ds.actual_sha[p]
                if not copied:
                    bad.append(f"files: {p!r} is not a copy of {source!r} (questions/file_sources.parquet)")
    return bad


def check_answers(ds: LoadedDataset) -> list[str]:
    """Rule 1: answers in range, each index equally often per task and split (at most 1 apart).

    Against each row's own choice count (``TaskSpec.n_choices``: its candidates or choice poses), so a variant with
    more choices whose answers never reach the last ones is caught."""
    bad = []
    for task, splits in ds.rows.items():
        spec = TASK_SPECS[TaskName(task)]
        if not spec.n_answers:
            continue
        for split, rows in splits.items():
            by_count: dict[int, list[QuestionCommon]] = {}
            for r in rows:
                by_count.setdefault(spec.n_choices(r), []).append(r)
            for k, group in sorted(by_count.items()):
                answers = [r.correct_answer() for r in group]
                wrong = [question_id(r) for r, a in zip(group, answers) if a is None or not 0 <= a < k]
                if wrong:
                    bad.append(f"answers: {task} {split}: answer outside 0..{k - 1} in {wrong[:3]}")
                    continue
                counts = [answers.count(i) for i in range(k)]
                if max(counts) - min(counts) > 1:
                    bad.append(f"answers: {task} {split}: answer counts {counts} over {k} choices are not uniform "
                               "(max - min > 1)")
    return bad


def check_unique(ds: LoadedDataset) -> list[str]:
    """Rule 2: each model (and so each drawing) is used by at most one question in the whole dataset; with
    ``questions.model_reuse = "per_task"`` (recorded in the summary) by at most one question per task, and a model
    used by several tasks is in the same split in each."""
    reuse = ds.summary.get("model_reuse") == ModelReuse.PER_TASK.value
    rows = [(t.value, s, r) for t, s, r in ds.all_rows()]
    scope = (lambda t: (t,)) if reuse else (lambda t: ())  # what a model and a file are unique within
    where: dict[str, set] = {}
    for t, s, r in rows:
        where.setdefault(str(r.model_id), set()).add((t, s))
    bad = []
    for key, n in sorted(Counter((*scope(t), str(r.model_id)) for t, _, r in rows).items()):
        if n > 1:
            places = ", ".join(sorted(f"{t}/{s}" for t, s in where[key[-1]]))
            bad.append(f"unique: model {key[-1]} is used by {n} questions{' of ' + key[0] if reuse else ''} ({places})")
    if reuse:
        bad += [f"unique: model {mid} is in splits {sorted({s for _, s in w})} of different tasks"
                for mid, w in sorted(where.items()) if len({s for _, s in w}) > 1]
    qids = Counter(question_id(r) for _, _, r in rows)
    bad += [f"unique: question id {q} occurs {n} times" for q, n in sorted(qids.items()) if n > 1]
    paths = Counter((*scope(t), p) for t, _, r in rows for p in r.paths())
    bad += [f"unique: file {key[-1]} is referenced {n} times" for key, n in sorted(paths.items()) if n > 1]
    return bad


def check_candidates(ds: LoadedDataset) -> list[str]:
    """Rule 3 (no two candidates alike) and that every answer and input is the drawing it claims to be."""
    return [line for task, _, row in ds.all_rows() for line in TASK_SPECS[task].check_row(ds, row)]


def check_models(ds: LoadedDataset) -> list[str]:
    """Rule 4: only models the drawing stage left unflagged."""
    bad = []
    for task, split, row in ds.all_rows():
        d = ds.drawings.get(str(row.model_id))
        flags = [] if d is None else [f for f, on in (("blank", d.blank), ("tiny", d.tiny), ("duplicate", d.duplicate))
                                      if on]
        if d is None or flags or not d.usable:
            why = ", ".join(flags) if flags else "not usable" if d else "not in drawings.parquet"
            bad.append(f"models: {question_id(row)} uses model {row.model_id} ({why})")
    return bad


def check_splits(ds: LoadedDataset) -> list[str]:
    """Rule 5: sizes in the configured split ratio (8:1:1 by default), split column = file, strata per split at most
    1 apart, true primitive counts."""
    bad = []
    strata = sorted(ds.summary["usable_models"])
    for task, splits in ds.rows.items():
        total = sum(len(r) for r in splits.values())
        expected = dict(zip(SPLITS, split_sizes(total, ds.summary["split_ratios"])))
        sizes = {s: len(splits.get(s, [])) for s in SPLITS}
        if ds.summary["planned"].get(task) == total and sizes != expected:
            ratio = split_ratio(ds.summary["split_ratios"])
            bad.append(f"splits: {task} split sizes {sizes} are not {expected} ({ratio} of {total})")
        for split, rows in splits.items():
            for r in rows:
                if r.split != split:
                    bad.append(f"splits: {question_id(r)} says split {r.split!r} but is in {split}.parquet")
                if r.n_primitives != ds.n_primitives.get(str(r.model_id), "?"):
                    bad.append(f"splits: {question_id(r)} says n_primitives {r.n_primitives}, models.parquet says "
                               f"{ds.n_primitives.get(str(r.model_id))}")
            mix = Counter("null" if r.n_primitives is None else str(r.n_primitives) for r in rows)
            counts = [mix.get(s, 0) for s in strata]
            if counts and max(counts) - min(counts) > 1:
                bad.append(f"splits: {task} {split} primitive mix {dict(zip(strata, counts))} is not balanced")
    return bad


def _image_size(out: Path, rel: str) -> tuple | None:
    try:
        data = drawing_bytes(out, rel)  # a file, or packed in the views table
        if rel.endswith(".png"):
            with Image.open(io.BytesIO(data)) as im:
                return ("png", *im.size)
        m = SVG_SIZE.search(data[:2000])
        return ("svg", *(float(v) for v in m.groups())) if m else None
    except OSError:
        return None


def check_images(ds: LoadedDataset) -> list[str]:
    """Rule 6: all images of a task have one size (PNG pixels, SVG canvas)."""
    bad = []
    for task, splits in ds.rows.items():
        sizes: Counter = Counter()
        for rows in splits.values():
            for r in rows:
                for p in r.paths():
                    if p.endswith((".png", ".svg")) and drawing_exists(ds.out, p):
                        sizes[_image_size(ds.out, p)] += 1
        kinds = Counter(k[0] if k else None for k in sizes)
        if any(n > 1 for n in kinds.values()) or None in kinds:
            bad.append(f"images: {task} mixes image sizes {dict(sizes)}")
    for svg, row in sorted(ds.cut_views.items()):  # cut objects are drawn at their model's scale
        drawn = ds.drawings.get(row["model_id"])
        model_scale = None if drawn is None else drawn.scale
        if model_scale is None or not np.isclose(row["scale"], model_scale, rtol=1e-9):
            bad.append(f"images: cut drawing {svg} has scale {row['scale']}, its model {model_scale}")
    return bad


def check_counts(ds: LoadedDataset) -> list[str]:
    """Rule 7: the requested counts (unless allow_fewer), the summary's counts, each task's own (point-cloud sizes)."""
    bad = []
    for task, requested in ds.summary["requested"].items():
        have = sum(len(r) for r in ds.rows.get(task, {}).values())
        if have != requested and not ds.summary["allow_fewer"]:
            bad.append(f"counts: {task} has {have} questions, {requested} were requested (allow_fewer is off)")
        recorded = sum(ds.summary["produced"].get(task, {}).values())
        if have != recorded:
            bad.append(f"counts: {task} has {have} questions, summary.json records {recorded}")
    for task, _, row in ds.all_rows():
        check_row = TASK_SPECS[task].check_counts_row
        if check_row is not None:
            bad += check_row(ds, row)
    return bad


CHECKS = (check_files, check_answers, check_unique, check_candidates, check_models, check_splits, check_images,
          check_counts)
