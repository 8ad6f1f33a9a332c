"""A synthetic dataset in the real file layout (question Parquet, views.parquet, PNG + SVG drawings), built fast.

Drawings are random straight polylines (black visible, red hidden) on a small canvas, so tests of the
loaders, scoring and bias audit control exactly what the answer side looks like: ``biased=True`` makes
the correct candidate the one with the most visible lines (and, for isometric_to_pose, the number of
hidden lines tell the pose), a shortcut any question-blind probe should find. ``views_decide=True`` makes the
views decide the answer instead: the correct candidate is drawn with the front view's own lines (the others are
random), and for isometric_to_pose the front view's lines lie in the quadrant of the answer; the choices alone
then tell nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from spare_gen.config.schema import TaskName
from spare_gen.config.tasks.isometric_to_pose import PoseChoices
from spare_gen.canvas.poses import random_poses
from spare_gen.stages.questions.tasks import question_schema
from spare_gen.config.tasks.isometric_to_pose import POSE_CHOICE_SETS
from spare_gen.rng import derive_rng

SIZE = 32
SPLIT_SIZES = {"train": 40, "val": 4, "test": 24}
N_POINTS = 7


def _lines(rng: np.random.Generator, n: int) -> list[list[list[float]]]:
    return [np.round(rng.uniform(2, SIZE - 2, size=(2, 2)), 2).tolist() for _ in range(n)]


class Writer:
    """Writes drawings and collects their views.parquet rows."""

    def __init__(self, root: Path):
        self.root = root
        self.views: list[dict] = []

    def drawing(self, model_id: str, view: str, visible, hidden) -> dict:
        rel = f"drawings/{model_id}/{view}"
        image = Image.new("RGB", (SIZE, SIZE), (255, 255, 255))
        draw = ImageDraw.Draw(image)
        for lines, color in ((hidden, (255, 0, 0)), (visible, (0, 0, 0))):
            for line in lines:
                draw.line([tuple(p) for p in line], fill=color, width=1)
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        image.save(self.root / f"{rel}.png")
        (self.root / f"{rel}.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}"/>\n')
        self.views.append({"model_id": model_id, "view": view, "svg": f"{rel}.svg", "png": f"{rel}.png",
                           "visible": visible, "hidden": hidden, "camera_rotation": None, "camera_position": None})
        return {"svg": f"{rel}.svg", "png": f"{rel}.png"}

    def random(self, model_id: str, view: str, rotation: np.ndarray, position: np.ndarray) -> None:
        self.views.append({"model_id": model_id, "view": view, "svg": None, "png": None, "visible": [],
                           "hidden": [], "camera_rotation": rotation.tolist(), "camera_position": position.tolist()})


def _quadrant_lines(rng: np.random.Generator, n: int, quadrant: int) -> list[list[list[float]]]:
    """``n`` random lines inside one quadrant (0 top left, 1 top right, 2 bottom left, 3 bottom right)."""
    x0, y0 = (quadrant % 2) * SIZE / 2, (quadrant // 2) * SIZE / 2
    return [np.round(rng.uniform(2, SIZE / 2 - 2, size=(2, 2)) + [x0, y0], 2).tolist() for _ in range(n)]


def _inputs(w: Writer, model_id: str, rng, front: tuple | None = None) -> dict:
    """F, R, T drawings of random lines; ``front``: (visible, hidden) lines of F instead."""
    out = {}
    for view, name in (("f", "front"), ("r", "right"), ("t", "top")):
        lines = front if view == "f" and front is not None else (_lines(rng, 3), _lines(rng, 1))
        paths = w.drawing(model_id, view, *lines)
        out[f"{name}_svg"], out[f"{name}_png"] = paths["svg"], paths["png"]
    return out


def _candidates(w: Writer, model_id: str, answer: int, biased: bool, rng, front: tuple | None = None) -> dict:
    """4 candidates of random lines; ``biased``: the answer has the most; ``front``: the answer is drawn with them."""
    counts = rng.integers(2, 6, size=4)
    if biased:
        counts[answer] = 7
    paths = [w.drawing(model_id, f"c{k}", *(front if front is not None and k == answer else
                                            (_lines(rng, int(counts[k])), _lines(rng, 1)))) for k in range(4)]
    return {"candidate_svg": [p["svg"] for p in paths], "candidate_png": [p["png"] for p in paths]}


def make_dataset(root: Path, *, seed: int = 0, biased: bool = False, split_sizes: dict | None = None,
                 random_views: int = 0, n_models_with_views: int = 0, views_decide: bool = False) -> Path:
    """Write the dataset under ``root``; return ``root``."""
    root = Path(root)
    w = Writer(root)
    sizes = split_sizes or SPLIT_SIZES
    for task in TaskName:
        rows_by_split = {}
        for split, n in sizes.items():
            answers = derive_rng(seed, "synthetic", task.value, split, "answers").permutation(np.arange(n) % 4)
            rows = []
            for i in range(n):
                model_id = f"{task.value}-{split}-{i:03d}"
                rng = derive_rng(seed, "synthetic", task.value, split, i)
                answer = int(answers[i])
                front = None
                if views_decide:
                    if task is TaskName.ISOMETRIC_TO_POSE:
                        front = (_quadrant_lines(rng, 3, answer), _quadrant_lines(rng, 1, answer))
                    else:
                        front = (_lines(rng, int(rng.integers(2, 6))), _lines(rng, 1))
                row = {"question_id": f"{task.value}-{split}-{i:05d}", "task": task.value, "split": split,
                       "model_id": model_id, "n_primitives": 2 + i % 3, "seed": i,
                       **_inputs(w, model_id, rng, front)}
                given = front if task is not TaskName.ISOMETRIC_TO_POSE else None
                if task is TaskName.THREE_VIEW_TO_ISOMETRIC:
                    row.update(_candidates(w, model_id, answer, biased, rng, given), answer=answer)
                elif task is TaskName.POSE_TO_ISOMETRIC:
                    row.update(_candidates(w, model_id, answer, biased, rng, given), answer=answer, pose=1 + i % 8,
                               candidate_poses=[1, 2, 3, 4])
                elif task is TaskName.ISOMETRIC_TO_POSE:
                    hidden = answer + 1 if biased else int(rng.integers(1, 5))
                    p = w.drawing(model_id, "iso", _lines(rng, 4), _lines(rng, hidden))
                    row.update(iso_svg=p["svg"], iso_png=p["png"], choice_poses=list(POSE_CHOICE_SETS[PoseChoices.UPPER]), answer=answer)
                elif task is TaskName.ISOMETRIC_VIEW_GENERATION:
                    p = w.drawing(model_id, "2", _lines(rng, 4), _lines(rng, 2))
                    row.update(target_svg=p["svg"], target_png=p["png"])
                else:
                    pts = rng.standard_normal((N_POINTS, 3)).astype(np.float32)
                    row.update(points=pts.tolist(), n_points=N_POINTS, deflection=0.01)
                rows.append(row)
            rows_by_split[split] = rows
        for split, rows in rows_by_split.items():
            schema = question_schema(task)
            table = pa.table({f.name: [r.get(f.name) for r in rows] for f in schema}, schema=schema)
            (root / "questions" / task.value).mkdir(parents=True, exist_ok=True)
            pq.write_table(table, root / "questions" / task.value / f"{split}.parquet")
    for m in range(n_models_with_views):
        rng = derive_rng(seed, "synthetic", "cameras", m)
        centre = rng.uniform(-1, 1, 3)
        for pose in random_poses(random_views, rng):
            w.random(f"cam-{m:02d}", pose.name, pose.rotation(), centre + 2.0 * np.asarray(pose.direction))
    pq.write_table(pa.Table.from_pylist(w.views, schema=VIEWS_SCHEMA), root / "views.parquet")
    return root


POLYLINES = pa.list_(pa.list_(pa.list_(pa.float64())))
VIEWS_SCHEMA = pa.schema([("model_id", pa.string()), ("view", pa.string()), ("svg", pa.string()),
                          ("png", pa.string()), ("visible", POLYLINES), ("hidden", POLYLINES),
                          ("camera_rotation", pa.list_(pa.list_(pa.float64()))),
                          ("camera_position", pa.list_(pa.float64()))])
