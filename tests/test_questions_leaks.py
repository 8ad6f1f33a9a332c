"""No answer in any path, file name, file order or candidate order (issue 15, item 1).

For every multiple-choice task a set of question-blind predictors reads only paths (their tokens, shared
tokens with the input paths, the query pose written in a name), the name order and the modification-time
order of a question's candidate files; none may pick the answer better than chance. The same predictors
flag a copy of the dataset whose files are named the old way (``cut0`` for the correct cut object, the
pose number for a pose drawing), so the test can fail. The generation tasks have no answer to leak.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from scipy.stats import binom

from spare_gen.config.schema import TaskName
from spare_gen.data import iter_questions
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.schema import FILE_SOURCES_NAME, QUESTIONS_DIR, split_path

ALPHA = 1e-3  # a predictor "leaks" when P(accuracy >= observed | chance) is below this
CANDIDATE_TASKS = (TaskName.THREE_VIEW_TO_ISOMETRIC, TaskName.POSE_TO_ISOMETRIC)
INPUTS = ("front_svg", "front_png", "right_svg", "right_png", "top_svg", "top_png")


def tokens(path: str) -> set[str]:
    """Every component of a path split at / _ . - plus each folder and the file name."""
    parts = path.split("/")
    return set(re.split(r"[/_.\-]", path)) | set(parts) | {"/".join(parts[:-1])}


def _answer_side(task: TaskName, row: dict) -> list[list[str]]:
    """Per choice the paths a model could see for it (candidate files), or the one iso drawing's paths."""
    if task is TaskName.ISOMETRIC_TO_POSE:
        return [[row["iso_svg"], row["iso_png"]]]
    files = [list(pair) for pair in zip(row["candidate_svg"], row["candidate_png"])]
    if "candidate_step" in row:
        files = [f + [s] for f, s in zip(files, row["candidate_step"])]
    return files


def _mtime(path: Path) -> int:
    return path.stat().st_mtime_ns if path.is_file() else 0  # a planted copy's renamed files do not exist


def _argmax(scores: list[float]) -> int:
    return max(range(len(scores)), key=lambda i: (scores[i], -i))  # ties: the lowest index


def predictions(out: Path, task: TaskName, rows: list[dict]) -> dict[str, list[int]]:
    """Predictor name -> predicted answer per row; every predictor sees paths and file metadata only."""
    sides = [[set().union(*map(tokens, f)) for f in _answer_side(task, r)] for r in rows]
    preds: dict[str, list[int]] = defaultdict(list)
    if task is TaskName.ISOMETRIC_TO_POSE:  # one drawing, 4 classes: leave-one-out max P(class | token)
        for i, row in enumerate(rows):
            votes, seen = Counter(), Counter()
            for j, other in enumerate(rows):
                if j != i:
                    seen.update(sides[j][0])
                    votes.update((t, other["answer"]) for t in sides[j][0])
            known = [t for t in sides[i][0] if seen[t]]
            preds["path tokens"].append(_argmax([max((votes[(t, k)] / seen[t] for t in known), default=0.0)
                                                 for k in range(4)]))
        return preds
    for i, row in enumerate(rows):
        hits, seen = Counter(), Counter()
        for j, other in enumerate(rows):  # leave-one-out P(correct | token)
            if j != i:
                for k, toks in enumerate(sides[j]):
                    seen.update(toks)
                    hits.update(toks if k == other["answer"] else ())
        score = [max((hits[t] / seen[t] for t in toks if seen[t]), default=0.25) for toks in sides[i]]
        preds["path tokens"].append(_argmax(score))
        inputs = set().union(*(tokens(row[c]) for c in INPUTS))
        common = set.intersection(*sides[i])
        preds["tokens shared with F, R, T"].append(_argmax([len((t - common) & inputs) for t in sides[i]]))
        if "pose" in row:
            preds["query pose in name"].append(_argmax([float(str(row["pose"]) in t) for t in sides[i]]))
        preds["row index mod 4"].append(i % 4)
        names = [Path(f[0]).name for f in _answer_side(task, row)]
        mtimes = [_mtime(out / f[0]) for f in _answer_side(task, row)]
        for rank in range(len(names)):
            preds[f"name order rank {rank}"].append(sorted(range(len(names)), key=lambda k: names[k])[rank])
            preds[f"mtime order rank {rank}"].append(sorted(range(len(names)), key=lambda k: (mtimes[k], k))[rank])
    return preds


def leaks(out: Path, task: TaskName, rows: list[dict]) -> dict[str, tuple[int, int, float]]:
    """Predictors that beat chance: name -> (correct, total, one-sided binomial p)."""
    answers = [r["answer"] for r in rows]
    found = {}
    for name, pred in predictions(out, task, rows).items():
        correct = sum(p == a for p, a in zip(pred, answers))
        p_value = float(binom.sf(correct - 1, len(rows), 0.25))
        if p_value < ALPHA:
            found[name] = (correct, len(rows), p_value)
    return found


def _rows(out: Path, task: TaskName) -> list[dict]:
    return [r for s in SPLITS if split_path(out, task.value, s).is_file()
            for r in pq.read_table(split_path(out, task.value, s)).to_pylist()]


@pytest.mark.parametrize("task", [*CANDIDATE_TASKS, TaskName.ISOMETRIC_TO_POSE], ids=lambda t: t.value)
def test_no_path_name_or_order_predicts_the_answer(small_dataset, task):
    rows = _rows(small_dataset, task)
    assert len(rows) >= 40
    assert leaks(small_dataset, task, rows) == {}
    answers = Counter(r["answer"] for r in rows)  # candidate order: answers exactly balanced
    assert max(answers.values()) - min(answers.values()) <= len(SPLITS)


def test_no_file_is_named_after_a_cut_or_a_pose(small_dataset):
    sources = {r["path"]: r["source"] for r in pq.read_table(
        small_dataset / QUESTIONS_DIR / FILE_SOURCES_NAME).to_pylist()}
    for task in (*CANDIDATE_TASKS, TaskName.ISOMETRIC_TO_POSE):
        for row in _rows(small_dataset, task):
            for files in _answer_side(task, row):
                for path in files:
                    name = Path(path).stem
                    assert re.fullmatch(r"[0-9a-f]{32}", name), path
                    assert path in sources or task is TaskName.THREE_VIEW_TO_ISOMETRIC
    cuts = pq.read_table(small_dataset / QUESTIONS_DIR / "cut_views.parquet").to_pylist()
    assert not [r["svg"] for r in cuts if re.search(r"cut\d", r["svg"])]


def test_the_old_naming_is_flagged(small_dataset):
    """Paths named the old way (correct cut = cut0, a pose drawing named by its pose) are caught."""
    three = _rows(small_dataset, TaskName.THREE_VIEW_TO_ISOMETRIC)
    for r in three:
        folder = f"questions/cuts/{r['model_id']}"
        r["candidate_svg"] = [f"{folder}/drawings/cut{k}/2.svg" for k in r["candidate_cuts"]]
        r["candidate_png"] = [f"{folder}/drawings/cut{k}/2.png" for k in r["candidate_cuts"]]
        r["candidate_step"] = [f"{folder}/cut{k}.step" for k in r["candidate_cuts"]]
    assert "path tokens" in leaks(small_dataset, TaskName.THREE_VIEW_TO_ISOMETRIC, three)
    pose = _rows(small_dataset, TaskName.POSE_TO_ISOMETRIC)
    for r in pose:
        r["candidate_svg"] = [f"drawings/{r['model_id']}/{p}.svg" for p in r["candidate_poses"]]
        r["candidate_png"] = [f"drawings/{r['model_id']}/{p}.png" for p in r["candidate_poses"]]
    assert "query pose in name" in leaks(small_dataset, TaskName.POSE_TO_ISOMETRIC, pose)
    iso = _rows(small_dataset, TaskName.ISOMETRIC_TO_POSE)
    for r in iso:
        p = r["choice_poses"][r["answer"]]
        r["iso_svg"], r["iso_png"] = f"drawings/{r['model_id']}/{p}.svg", f"drawings/{r['model_id']}/{p}.png"
    assert "path tokens" in leaks(small_dataset, TaskName.ISOMETRIC_TO_POSE, iso)



MAPPING_COLUMNS = {"candidate_cuts", "candidate_poses", "choice_poses", "cutters", "candidate_step"}


@pytest.mark.parametrize("task", list(TaskName), ids=lambda t: t.value)
def test_loaders_hand_out_no_mapping_and_no_paths(small_dataset, task):
    item = next(iter_questions(small_dataset, task, "train", size=16))
    assert not MAPPING_COLUMNS & set(item)
    assert set(item) <= {"question_id", "task", "split", "model_id", "n_primitives", "views", "iso", "pose",
                         "candidates", "answer", "target"}
    assert all(not isinstance(v, str) or k in ("question_id", "task", "split", "model_id") for k, v in item.items())
