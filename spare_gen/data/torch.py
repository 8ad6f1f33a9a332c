"""PyTorch datasets of the five tasks in the SPARE3D baseline formulations (needs the ``torch`` extra).

Images are (3, H, W) float32 in [0, 1] stacked along channels in the order F, R, T (then the
isometric drawing or a candidate). Per task an item holds:

* three_view_to_isometric: ``inputs`` (4, 12, H, W), F, R, T + candidate k for each k; ``answer``.
* isometric_to_pose: ``inputs`` (12, H, W), F, R, T + the isometric drawing; ``answer`` 0..3 for
  the row's ``choice_poses`` ((1, 2, 3, 4) by default, (1, 2, 5, 6) with ``questions.pose_choices = "spare3d"``).
* pose_to_isometric: ``inputs`` (4, 12, H, W) as above; ``pose`` (8,) one-hot of poses 1..8; ``answer``.
* isometric_view_generation: ``inputs`` (9, H, W), ``target`` (3, H, W).
* point_cloud_generation: ``inputs`` (9, H, W), ``target`` (n, 3) float32 (n = 2025 by default).

Images are RGB by default; ``channels="bgr"`` gives OpenCV's order (what ``cv2.imread`` and the published SPARE3D
loaders give), so weights trained on the released SPARE3D data can be evaluated on a spare_gen dataset.

Every item also has ``question_id`` (str) and ``n_primitives`` (int64, -1 for file models). A dataset
holds the rows as plain Python data and opens each PNG only while reading it, so it pickles to
``DataLoader`` workers.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import numpy as np

try:
    import torch
    from torch.utils.data import Dataset
except ImportError as exc:  # the base install has no torch
    raise ImportError("spare_gen.data.torch needs PyTorch: pip install 'spare_gen[torch]'") from exc

from spare_gen.config.schema import TaskName
from spare_gen.data.loaders import QuestionReader
from spare_gen.data.tables import load_split
from spare_gen.questions.layout import ALL_POSES, task_name
from spare_gen.questions.spec import TargetKind
from spare_gen.questions.tasks import TASK_SPECS

N_POSES = len(ALL_POSES)
VIEW_ORDER = ("f", "r", "t")


class Channels(str, Enum):
    """Colour channel order of every image tensor."""

    RGB = "rgb"
    BGR = "bgr"


def channel_order(value: "Channels | str") -> Channels:
    try:
        return Channels(value)
    except ValueError:
        raise ValueError(f"unknown channel order {value!r}; choose from rgb, bgr") from None


def _chw(image: np.ndarray, channels: Channels = Channels.RGB) -> torch.Tensor:
    """(..., H, W, 3) RGB numpy to (..., 3, H, W) tensor in ``channels`` order."""
    if channels is Channels.BGR:
        image = image[..., ::-1]
    return torch.from_numpy(np.ascontiguousarray(np.moveaxis(image, -1, -3)))


def pose_one_hot(pose: int) -> torch.Tensor:
    """(8,) float32 one-hot of an isometric pose 1..8."""
    if pose not in ALL_POSES:
        raise ValueError(f"unknown isometric pose {pose!r}; choose from 1..8")
    out = torch.zeros(N_POSES, dtype=torch.float32)
    out[ALL_POSES.index(pose)] = 1.0
    return out


class QuestionDataset(Dataset):
    """Map-style dataset of one task split; ``formulate`` turns a numpy item into tensors by the task's loader keys."""

    task: TaskName

    def __init__(self, out: str | Path, split: str, *, size: int | tuple[int, int] | None = None,
                 channels: Channels | str = Channels.RGB):
        self.out = Path(out).resolve()
        self.split = split
        self.channels = channel_order(channels)
        self.reader = QuestionReader(self.out, self.task, size=size)
        self.rows = load_split(self.out, self.task, split).to_pylist()

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> dict:
        item = self.reader.item(self.rows[index])
        views = torch.cat([self.chw(item["views"][v]) for v in VIEW_ORDER], dim=0)  # (9, H, W)
        n_prim = item["n_primitives"]
        return {"question_id": item["question_id"],
                "n_primitives": torch.tensor(-1 if n_prim is None else int(n_prim), dtype=torch.int64),
                **self.formulate(item, views)}

    def formulate(self, item: dict, views: torch.Tensor) -> dict:
        """inputs: the views, then each extra input drawing; (4, C, H, W) with candidates; pose; answer; target."""
        spec = TASK_SPECS[self.task]
        inputs = torch.cat([views, *(self.chw(item[key]) for key in spec.loader.drawing)], dim=0)
        out = {"inputs": self.with_candidates(inputs, item["candidates"]) if spec.loader.candidates else inputs}
        if spec.loader.pose is not None:
            out["pose"] = pose_one_hot(item["pose"])
        if spec.n_answers:
            out["answer"] = torch.tensor(item["answer"], dtype=torch.int64)
        if spec.loader.target is TargetKind.DRAWING:
            out["target"] = self.chw(item["target"])
        elif spec.loader.target is TargetKind.POINTS:
            out["target"] = torch.from_numpy(item["target"])
        return out

    def chw(self, image: np.ndarray) -> torch.Tensor:
        """An (..., H, W, 3) image as (..., 3, H, W) in this dataset's channel order."""
        return _chw(image, self.channels)

    def with_candidates(self, views: torch.Tensor, candidates: np.ndarray) -> torch.Tensor:
        """(4, C + 3, H, W): the C view channels followed by each candidate's 3, in this dataset's channel order."""
        cands = self.chw(candidates)  # (4, 3, H, W)
        return torch.cat([views.unsqueeze(0).expand(len(cands), -1, -1, -1), cands], dim=1)


def _dataset_class(task: TaskName) -> type[QuestionDataset]:
    name = "".join(part.capitalize() for part in task.value.split("_"))
    return type(name, (QuestionDataset,), {"task": task, "__module__": __name__,
                                            "__doc__": f"The {task.value} questions as tensors."})


DATASETS: dict[TaskName, type[QuestionDataset]] = {task: _dataset_class(task) for task in TASK_SPECS}
globals().update({cls.__name__: cls for cls in DATASETS.values()})  # ThreeViewToIsometric, IsometricToPose, ...


def task_dataset(out: str | Path, task: TaskName | str, split: str, *,
                 size: int | tuple[int, int] | None = None, channels: Channels | str = Channels.RGB
                 ) -> QuestionDataset:
    """The dataset of ``task`` / ``split`` under ``out``, images resized to ``size`` if given, in ``channels`` order."""
    return DATASETS[task_name(task)](out, split, size=size, channels=channels)
