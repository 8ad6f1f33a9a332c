"""PyTorch datasets: the SPARE3D formulations' tensors, checked against the numpy loaders, in worker processes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from synthetic_dataset import make_dataset

torch = pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

from torch.utils.data import DataLoader  # noqa: E402

from spare_gen.data import iter_questions  # noqa: E402
from spare_gen.data.torch import VIEW_ORDER, pose_one_hot, task_dataset  # noqa: E402

SIZE = 16
N_TEST = 6


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("torch") / "out", split_sizes={"train": 4, "val": 2, "test": N_TEST})


def chw(image: np.ndarray) -> np.ndarray:
    return np.moveaxis(image, -1, -3)


def batches(dataset, **kw) -> dict:
    """All items of a DataLoader with 2 worker processes, concatenated along the batch axis."""
    out: dict = {}
    for batch in DataLoader(dataset, batch_size=4, num_workers=2, **kw):
        for k, v in batch.items():
            out.setdefault(k, []).append(v)
    return {k: (sum(v, []) if isinstance(v[0], list) else torch.cat(v)) for k, v in out.items()}


@pytest.mark.parametrize("task", ["three_view_to_isometric", "pose_to_isometric"])
def test_candidate_tasks_stack_views_and_each_candidate(synthetic, task):
    got = batches(task_dataset(synthetic, task, "test", size=SIZE))
    items = list(iter_questions(synthetic, task, "test", size=SIZE))
    assert got["inputs"].shape == (N_TEST, 4, 12, SIZE, SIZE) and got["inputs"].dtype == torch.float32
    assert got["question_id"] == [i["question_id"] for i in items]
    assert got["answer"].dtype == torch.int64 and got["answer"].tolist() == [i["answer"] for i in items]
    assert got["n_primitives"].tolist() == [i["n_primitives"] for i in items]
    for q, item in enumerate(items):
        views = np.concatenate([chw(item["views"][v]) for v in VIEW_ORDER])
        for k in range(4):
            np.testing.assert_array_equal(got["inputs"][q, k, :9].numpy(), views)
            np.testing.assert_array_equal(got["inputs"][q, k, 9:].numpy(), chw(item["candidates"][k]))
    if task == "pose_to_isometric":
        assert got["pose"].shape == (N_TEST, 8) and got["pose"].dtype == torch.float32
        assert got["pose"].sum(dim=1).tolist() == [1.0] * N_TEST
        assert (got["pose"].argmax(dim=1) + 1).tolist() == [i["pose"] for i in items]


def test_isometric_to_pose_is_12_channels_and_a_label(synthetic):
    got = batches(task_dataset(synthetic, "isometric_to_pose", "test", size=SIZE))
    items = list(iter_questions(synthetic, "isometric_to_pose", "test", size=SIZE))
    assert got["inputs"].shape == (N_TEST, 12, SIZE, SIZE)
    for q, item in enumerate(items):
        np.testing.assert_array_equal(got["inputs"][q, 9:].numpy(), chw(item["iso"]))
        np.testing.assert_array_equal(got["inputs"][q, 3:6].numpy(), chw(item["views"]["r"]))
    assert got["answer"].tolist() == [i["answer"] for i in items]


def test_generation_tasks_give_inputs_and_targets(synthetic):
    got = batches(task_dataset(synthetic, "isometric_view_generation", "test", size=SIZE))
    items = list(iter_questions(synthetic, "isometric_view_generation", "test", size=SIZE))
    assert got["inputs"].shape == (N_TEST, 9, SIZE, SIZE) and got["target"].shape == (N_TEST, 3, SIZE, SIZE)
    np.testing.assert_array_equal(got["target"][2].numpy(), chw(items[2]["target"]))
    got = batches(task_dataset(synthetic, "point_cloud_generation", "test"))
    items = list(iter_questions(synthetic, "point_cloud_generation", "test"))
    assert got["inputs"].shape == (N_TEST, 9, 32, 32)  # native size without `size`
    assert got["target"].shape == (N_TEST, 7, 3) and got["target"].dtype == torch.float32
    np.testing.assert_array_equal(got["target"][5].numpy(), items[5]["target"])


def test_datasets_pickle_and_run_in_spawned_workers(synthetic):
    ds = task_dataset(synthetic, "pose_to_isometric", "test", size=SIZE)
    clone = pickle.loads(pickle.dumps(ds))
    assert torch.equal(clone[3]["inputs"], ds[3]["inputs"])
    got = batches(ds, multiprocessing_context="spawn")  # workers get the dataset by pickling, as on macOS/Windows
    assert got["inputs"].shape == (N_TEST, 4, 12, SIZE, SIZE)
    assert torch.equal(got["inputs"][3], ds[3]["inputs"])


def test_pose_one_hot_and_bad_names():
    assert pose_one_hot(1).tolist() == [1, 0, 0, 0, 0, 0, 0, 0]
    assert pose_one_hot(8).tolist() == [0, 0, 0, 0, 0, 0, 0, 1]
    with pytest.raises(ValueError, match="unknown isometric pose 9"):
        pose_one_hot(9)
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        task_dataset(".", "nope", "test")


def test_real_dataset_in_a_dataloader(small_dataset):
    ds = task_dataset(small_dataset, "three_view_to_isometric", "train", size=64)
    got = batches(ds)
    assert got["inputs"].shape == (len(ds), 4, 12, 64, 64)
    assert 0.0 <= float(got["inputs"].min()) and float(got["inputs"].max()) <= 1.0
    assert float(got["inputs"].mean()) > 0.5  # white paper with dark lines
    answers = got["answer"].tolist()
    assert sorted(set(answers)) <= [0, 1, 2, 3] and len(answers) == len(ds)


def test_bgr_channels_match_opencv_reads(small_dataset):
    import cv2

    from spare_gen.data.tables import load_split

    rgb = task_dataset(small_dataset, "isometric_to_pose", "test")
    bgr = task_dataset(small_dataset, "isometric_to_pose", "test", channels="bgr")
    rows = load_split(small_dataset, "isometric_to_pose", "test").to_pylist()
    red_seen = False
    for i, row in enumerate(rows):
        got_bgr, got_rgb = bgr[i]["inputs"].numpy(), rgb[i]["inputs"].numpy()
        for c, col in enumerate(("front_png", "right_png", "top_png", "iso_png")):
            opencv = np.moveaxis(cv2.imread(str(small_dataset / row[col])), -1, 0).astype(np.float32) / 255
            np.testing.assert_allclose(got_bgr[3 * c:3 * c + 3], opencv, atol=1e-6)
            np.testing.assert_array_equal(got_rgb[3 * c:3 * c + 3], got_bgr[3 * c:3 * c + 3][::-1])
        red_seen |= bool((got_rgb[0] != got_rgb[2]).any())  # red hidden lines make the orders differ
    assert red_seen
    with pytest.raises(ValueError, match="unknown channel order 'hsv'"):
        task_dataset(small_dataset, "isometric_to_pose", "test", channels="hsv")
