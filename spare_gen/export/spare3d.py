"""``spare-gen export-spare3d``: a dataset in the folder layout the published SPARE3D loaders read unchanged.

Layout under DEST (one folder per task, one per split, one per question; split folders hold nothing else):

* ``Three_view_to_isometric/<split>/answer.json`` ``{"<q>": 0..3}`` (ints) beside ``<q>/`` with ``<q>_f.png``,
  ``<q>_r.png``, ``<q>_t.png`` and the candidates ``0.png``..``3.png``.
* ``Isometric_to_pose/<split>/answer.json`` with *string* values ``"0".."3"`` (label k means pose ``choice_poses[k]``:
  (1, 2, 3, 4) by default, SPARE3D's (1, 2, 5, 6) with ``questions.pose_choices = "spare3d"``), folders with
  ``<q>_f/_r/_t.png`` and ``answer.png`` (the isometric drawing whose pose is asked).
* ``Pose_to_isometric/<split>/answer.json`` (ints), folders with ``<q>_f/_r/_t.png``, ``0.png``..``3.png`` and an
  empty ``pose_<k>.txt`` naming the query pose.
* ``Isometric_view_generation/<split>/<q>/Dic3V/<q>_front.png, <q>_right.png, <q>_top.png`` and
  ``<q>/DicAns/isometric.png``; ``Point_cloud_generation/<split>/<q>/Dic3V/...`` and ``<q>/DicAns/<q>.npy``.

``<q>`` is the question's row number in its split Parquet, zero-padded; ``<Task>/index.json`` (beside the split
folders) maps each folder back to its ``question_id``. PNGs are 200 x 200 8-bit RGB on white. Everything is read
from the Parquet columns (never from file names). Every file is written atomically and its content is a function of
the dataset alone, so a rerun skips files that exist: an interrupted export resumes. ``spare3d_export.json`` at the
root marks DEST as an export and records which dataset split files it came from; ``README.md`` beside it says how
to train SPARE3D's published trainers on the export and names their defects with the one-line fix for each.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from spare_gen import console
from spare_gen.atomic import write_bytes, write_json, write_text
from spare_gen.config.schema import TaskName
from spare_gen.data.tables import Kind, available_tasks, check_split, load_rows
from spare_gen.canvas.raster import png_bytes
from spare_gen.filehash import sha256_file
from spare_gen.store.packed import drawing_bytes
from spare_gen.stages.questions.schema import QuestionCommon, split_path
from spare_gen.stages.questions.spec import TargetKind
from spare_gen.stages.questions.tasks import SPLITS, TASK_SPECS, task_name

EXPORT_SIZE = 200  # the released SPARE3D PNGs are 200 x 200
WHITE = (255, 255, 255)
MARKER_NAME = "spare3d_export.json"
README_NAME = "README.md"
INDEX_NAME = "index.json"
ANSWER_NAME = "answer.json"
DIC_VIEWS, DIC_ANSWER = "Dic3V", "DicAns"
MIN_FOLDER_DIGITS = 5
STALE_TMP = re.compile(r"^\..+\.tmp$")  # spare_gen.atomic's temporary names, left behind by a killed run

# Folder and file names of each task: its spec's ``spare3d`` layout (``spare_gen.stages.questions.spec.Spare3dLayout``).
TASK_FOLDERS: dict[TaskName, str] = {task: spec.spare3d.folder for task, spec in TASK_SPECS.items()}
# Suffix of each input view's file: short (<q>_f.png) in the answer.json tasks, long (<q>_front.png) in Dic3V.
SHORT_VIEW_SUFFIX = {"f": "f", "r": "r", "t": "t"}
LONG_VIEW_SUFFIX = {"f": "front", "r": "right", "t": "top"}


README = """# SPARE3D layout, written by spare-gen export-spare3d

Each `<Task>/<split>/` folder is what the published loaders of ai4ce/SPARE3D (`Code/<Task>/Dataloader.py`) read:
point a trainer's `--Training_dataroot` / `--Validating_dataroot` at `<Task>/train` and `<Task>/val`.
`<Task>/index.json` maps each question folder back to spare_gen's `question_id`; `spare3d_export.json` records
which dataset it came from.

## The published trainers' defects, and the one-line fix for each

1. Missing import: the `Dataloader.py` files of `Three_view_to_isometric`, `Isometric_to_pose` and
   `Pose_to_isometric` call `json.load` (to read `answer.json`) without importing `json`.
   Fix: add `import json` at the top of each `Dataloader.py`.
2. Undefined model: `Isometric_to_pose/I2P_trainer.py` ends with `torch.save(task_1_model.state_dict(), ...)`,
   but its model is `task_4_model` (a `NameError` after the last epoch, and no weights saved). Fix: save
   `task_4_model.state_dict()`. The 3-view-to-isometric metric-learning trainer has the same last line with
   `task_1_hard_model` as its model: save `task_1_hard_model.state_dict()` there.
3. Wrong right view: `Isometric_to_pose/Dataloader.py` finds the right view with `glob.glob(folder + "/*r.png")[0]`,
   which also matches `answer.png`; glob order is the file system's, so in many folders the isometric drawing is
   read as the R view. Fix: use the pattern `"/*_r.png"` (and `"/*_f.png"`, `"/*_t.png"` alike).

Not defects, but worth knowing: the trainers' `--batchSize`, `--lr` and `--niter` defaults are not the paper's
(pass the values of the supplementary, section C, for the network you train); `cv2.imread` gives BGR where
spare_gen's own loaders give RGB; the drawings are 200 x 200 RGB on white.

`spare-gen train-baseline DATASET --task T --arch vgg16|resnet50|bagnet33 --formulation binary|metric|multiclass`
trains the same networks with the supplementary's recipes on the dataset itself, without these fixes.
"""


class ExportError(ValueError):
    """The export cannot start as asked (bad destination, task or split)."""


def uses_answer_json(task: TaskName) -> bool:
    """The multiple-choice tasks have an answer.json; the generation tasks a DicAns folder per question."""
    return TASK_SPECS[task].n_answers > 0


def answer_value(task: TaskName, answer: int) -> int | str:
    """The value answer.json holds: strings where the published loader compares with strings (isometric-to-pose)."""
    return str(int(answer)) if TASK_SPECS[task].spare3d.answer_text else int(answer)


@dataclass(frozen=True)
class PngFrom:
    """A file to write from a dataset PNG (path relative to the dataset root)."""

    rel_path: str | None  # None: the dataset has no PNG of it (render.png = false)


def question_files(task: TaskName, row: QuestionCommon, q: str) -> dict[str, PngFrom | bytes]:
    """Path inside the split folder -> what to write there, for one question row exported as folder ``q``."""
    png = Kind.PNG.value
    views = row.three_views(png)
    layout, keys = TASK_SPECS[task].spare3d, TASK_SPECS[task].loader
    files: dict[str, PngFrom | bytes] = {}
    if uses_answer_json(task):
        for view, rel in views.items():
            files[f"{q}/{q}_{SHORT_VIEW_SUFFIX[view]}.png"] = PngFrom(rel)
        for prefix in keys.drawing.values():
            files[f"{q}/{layout.drawing_file}"] = PngFrom(row.drawing(prefix, png))
        if keys.candidates:
            for k, rel in enumerate(row.candidates(png)):
                files[f"{q}/{k}.png"] = PngFrom(rel)
        if keys.pose is not None:
            files[f"{q}/pose_{keys.query_pose(row)}.txt"] = b""
        return files
    for view, rel in views.items():
        files[f"{q}/{DIC_VIEWS}/{q}_{LONG_VIEW_SUFFIX[view]}.png"] = PngFrom(rel)
    if keys.target is TargetKind.DRAWING and keys.target_column:
        files[f"{q}/{DIC_ANSWER}/{layout.target_file}"] = PngFrom(row.drawing(keys.target_column, png))
    else:
        points = np.asarray(keys.target_points(row), dtype=np.float32).reshape(-1, 3)
        files[f"{q}/{DIC_ANSWER}/{q}.npy"] = npy_bytes(points)
    return files


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def export_png(path: Path | bytes, size: int = EXPORT_SIZE) -> bytes:
    """The PNG at ``path`` (or its bytes) as ``size`` x ``size`` 8-bit RGB on white: its own bytes when it already
    is one."""
    data = path if isinstance(path, bytes) else path.read_bytes()
    with Image.open(io.BytesIO(data)) as im:
        if im.mode == "RGB" and im.size == (size, size):
            return data
        im = im.convert("RGBA")
        flat = Image.new("RGB", im.size, WHITE)
        flat.paste(im, mask=im.getchannel("A"))
    if flat.size != (size, size):
        flat = flat.resize((size, size), Image.Resampling.BILINEAR)
    return png_bytes(np.asarray(flat, dtype=np.uint8))


def folder_names(n: int) -> list[str]:
    """Zero-padded row numbers: their sorted order (what the loaders list) is the Parquet order."""
    width = max(MIN_FOLDER_DIGITS, len(str(max(n - 1, 0))))
    return [f"{i:0{width}d}" for i in range(n)]


def remove_stale_tmp(split_dir: Path) -> None:
    """Delete temporary files a killed run left in a split folder or its question folders."""
    for pattern in (".*.tmp", "*/.*.tmp", "*/*/.*.tmp"):
        for p in split_dir.glob(pattern):
            if STALE_TMP.match(p.name):
                p.unlink(missing_ok=True)


def resolve_selection(out: Path, tasks: list[str] | None, splits: list[str] | None
                      ) -> tuple[list[TaskName], list[str]]:
    """The tasks and splits to export, checked against the dataset (one-line errors)."""
    if not (out / "questions").is_dir():
        raise ExportError(f"{out}: no questions/ folder (not a spare_gen dataset, or the question stage did not run)")
    chosen_splits = [check_split(s) for s in (splits or SPLITS)]
    if tasks:
        chosen = [task_name(t) for t in tasks]
    else:
        chosen = available_tasks(out)
        if not chosen:
            raise ExportError(f"{out}: the dataset has no question files under questions/")
    for task in chosen:
        for split in chosen_splits:
            if not split_path(out, task.value, split).is_file():
                raise ExportError(f"{out}: the dataset has no {task.value} {split} questions "
                                  f"({split_path(out, task.value, split).relative_to(out)} missing)")
    return list(dict.fromkeys(chosen)), list(dict.fromkeys(chosen_splits))


def check_destination(dest: Path, sources: dict[str, str]) -> dict:
    """The marker of an earlier export in ``dest`` (or a new one); refuse a foreign or mismatched folder."""
    marker_path = dest / MARKER_NAME
    if dest.exists() and not dest.is_dir():
        raise ExportError(f"{dest}: exists and is not a folder")
    if not dest.exists() or not any(dest.iterdir()):
        return {"format": "spare3d", "sources": {}}
    if not marker_path.is_file():
        raise ExportError(f"{dest}: folder is not empty and is not an earlier export-spare3d (no {MARKER_NAME}); "
                          f"choose an empty or new folder")
    marker = json.loads(marker_path.read_text())
    for key, digest in sources.items():
        old = marker.get("sources", {}).get(key)
        if old is not None and old != digest:
            raise ExportError(f"{dest}: holds an export of a different {key} (its split file changed); "
                              f"export into an empty folder")
    return marker


def export_split(out: Path, dest: Path, task: TaskName, split: str, *, progress: bool = True) -> dict[str, str]:
    """Write one task split; returns folder -> question_id."""
    split_dir = dest / TASK_FOLDERS[task] / split
    split_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_tmp(split_dir)
    rows = load_rows(out, task, split)
    names = folder_names(len(rows))
    answers: dict[str, int | str] = {}
    index: dict[str, str] = {}
    bar = console.progress(len(rows), f"export-spare3d {task.value}/{split}", "question", enabled=progress)
    for q, row in zip(names, rows):
        bar.update(1)
        index[q] = str(row.question_id)
        if uses_answer_json(task):
            answer = row.correct_answer()
            if answer is None:
                raise ExportError(f"{out}: {row.question_id} has no answer (a damaged question table)")
            answers[q] = answer_value(task, answer)
        for rel, source in question_files(task, row, q).items():
            target = split_dir / rel
            if target.is_file():
                continue
            if isinstance(source, PngFrom) and not source.rel_path:
                raise ExportError(f"{out}: {row.question_id} names no PNG drawing (the dataset was made with "
                                  f"render.png = false); regenerate it with PNGs to export")
            data = export_png(drawing_bytes(out, source.rel_path)) if isinstance(source, PngFrom) else source
            write_bytes(target, data)
    bar.close()
    if uses_answer_json(task):
        write_json(split_dir / ANSWER_NAME, answers)
    return index


def export(out: str | Path, dest: str | Path, *, tasks: list[str] | None = None, splits: list[str] | None = None,
           progress: bool = True) -> dict:
    """Export ``tasks`` x ``splits`` of the dataset at ``out`` into ``dest``; returns the marker written."""
    out, dest = Path(out), Path(dest)
    if not out.is_dir():
        raise ExportError(f"{out}: no such dataset folder")
    chosen_tasks, chosen_splits = resolve_selection(out, tasks, splits)
    sources = {f"{t.value}/{s}": sha256_file(split_path(out, t.value, s)) for t in chosen_tasks for s in chosen_splits}
    marker = check_destination(dest, sources)
    marker["dataset"] = str(out.resolve())
    marker.setdefault("sources", {}).update(sources)
    marker.setdefault("complete", {})
    for key in sources:
        marker["complete"][key] = False
    write_json(dest / MARKER_NAME, marker)  # first, so an interrupted export is recognised and resumed
    write_text(dest / README_NAME, README)
    for task in chosen_tasks:
        index_path = dest / TASK_FOLDERS[task] / INDEX_NAME
        index = json.loads(index_path.read_text()) if index_path.is_file() else {}
        for split in chosen_splits:
            index[split] = export_split(out, dest, task, split, progress=progress)
            write_json(index_path, index)
            marker["complete"][f"{task.value}/{split}"] = True
            write_json(dest / MARKER_NAME, marker)
    return marker


def main(out: Path, dest: Path, tasks: list[str] | None, splits: list[str] | None, progress: bool = True) -> int:
    marker = export(out, dest, tasks=tasks, splits=splits, progress=progress)
    done = sorted(k for k, v in marker["complete"].items() if v)
    folders = [f"{TASK_FOLDERS[TaskName(t)]}/{s}" for t, s in (k.split("/") for k in done)]  # as written on disk
    print(f"spare-gen: exported {len(done)} task splits to {dest} in the SPARE3D layout ({', '.join(folders)})")
    return 0
