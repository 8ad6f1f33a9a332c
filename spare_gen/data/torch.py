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
``DataLoader`` workers. Items are built from the feed's uint8 items (``spare_gen.data.feed``) in numpy and become
tensors once, with no per-item tensor operation; for training, the feed itself (uint8 until the device, F, R, T
once per question, a decoded cache) moves far fewer bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

try:
    import torch
    from torch.utils.data import Dataset
except ImportError as exc:  # the base install has no torch
    raise ImportError("spare_gen.data.torch needs PyTorch: pip install 'spare_gen[torch]'") from exc

from spare_gen.config.schema import TaskName
from spare_gen.data.feed import (  # noqa: F401  (N_POSES, Channels, channel_order: re-exported for the trainers)
    N_POSES, N_VIEWS, Channels, FeedDataset, channel_order, pose_one_hot_array,
)
from spare_gen.data.loaders import to_unit_float
from spare_gen.stages.questions.layout import task_name
from spare_gen.stages.questions.spec import TargetKind
from spare_gen.stages.questions.tasks import TASK_SPECS

VIEW_ORDER = ("f", "r", "t")


def pose_one_hot(pose: int) -> torch.Tensor:
    """(8,) float32 one-hot of an isometric pose 1..8."""
    return torch.from_numpy(pose_one_hot_array(pose))


class QuestionDataset(Dataset):
    """Map-style dataset of one task split: the feed's uint8 items (decoded from PNG) as float tensors by the task's
    loader keys."""

    task: TaskName

    def __init__(self, out: str | Path, split: str, *, size: int | tuple[int, int] | None = None,
                 channels: Channels | str = Channels.RGB):
        self.feed = FeedDataset(out, self.task, split, size=size, channels=channel_order(channels), cache=False)
        self.out, self.split, self.channels = self.feed.out, split, self.feed.channels

    def __len__(self) -> int:
        return len(self.feed)

    def __getitem__(self, index: int) -> dict:
        """inputs: the views, then each extra input drawing; (K, C, H, W) with candidates; pose; answer; target."""
        spec = TASK_SPECS[self.task]
        images = to_unit_float(self.feed.block(index))  # (M, 3, H, W) float32, item order
        n_inputs = N_VIEWS + len(spec.loader.drawing)
        inputs = images[:n_inputs].reshape(-1, *images.shape[2:])  # (C, H, W)
        if spec.loader.candidates:
            k = self.feed.n_candidates[index]
            stacked = np.empty((k, inputs.shape[0] + 3, *images.shape[2:]), dtype=np.float32)
            stacked[:, :inputs.shape[0]] = inputs
            stacked[:, inputs.shape[0]:] = images[n_inputs:n_inputs + k]
            inputs = stacked
        out = {"question_id": self.feed.question_ids[index],
               "n_primitives": torch.tensor(int(self.feed.n_primitives[index]), dtype=torch.int64),
               "inputs": torch.from_numpy(np.ascontiguousarray(inputs))}
        if spec.loader.pose is not None:
            out["pose"] = torch.from_numpy(self.feed.poses[index].copy())
        if spec.n_answers:
            out["answer"] = torch.tensor(int(self.feed.answers[index]), dtype=torch.int64)
        if spec.loader.target is TargetKind.DRAWING:
            out["target"] = torch.from_numpy(images[-1].copy())
        elif spec.loader.target is TargetKind.POINTS:
            out["target"] = torch.from_numpy(self.feed.points[index])
        return out


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
