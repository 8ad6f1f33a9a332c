"""The training feed: uint8 items that reach a model as today's tensors, the decoded split cache, worker processes."""

from __future__ import annotations

import multiprocessing
import os
import pickle

import numpy as np
import pyarrow.parquet as pq
import pytest
from synthetic_dataset import make_dataset

torch = pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

from torch.utils.data import DataLoader, default_collate  # noqa: E402

from spare_gen.cli import main  # noqa: E402
from spare_gen.data import iter_questions  # noqa: E402
from spare_gen.data.feed import feed_dataset, legacy_inputs, to_device  # noqa: E402
from spare_gen.data.torch import task_dataset  # noqa: E402
from spare_gen.stages.questions.schema import split_path  # noqa: E402

SIZE = 16
N_TEST = 6
TASKS = ["three_view_to_isometric", "isometric_to_pose", "pose_to_isometric", "isometric_view_generation",
         "point_cloud_generation"]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("feed") / "out", split_sizes={"train": 4, "val": 2, "test": N_TEST})


def legacy_batch(dataset) -> dict:
    return default_collate([dataset[i] for i in range(len(dataset))])


def numpy_inputs(out, task: str, channels: str) -> np.ndarray:
    """The SPARE3D-formulation inputs built straight from the float numpy loader (``iter_questions``)."""
    def chw(image):
        return np.moveaxis(image[..., ::-1] if channels == "bgr" else image, -1, -3)

    stacks = []
    for item in iter_questions(out, task, "test", size=SIZE):
        base = np.concatenate([chw(item["views"][v]) for v in "frt"] + ([chw(item["iso"])] if "iso" in item else []))
        stacks.append(np.stack([np.concatenate([base, chw(c)]) for c in item["candidates"]])
                      if "candidates" in item else base)
    return np.stack(stacks)


@pytest.mark.parametrize("cache", [False, True])
@pytest.mark.parametrize("channels", ["rgb", "bgr"])
@pytest.mark.parametrize("task", TASKS)
def test_the_feed_reaches_the_model_as_todays_tensors(synthetic, tmp_path, task, channels, cache):
    feed = feed_dataset(synthetic, task, "test", size=SIZE, channels=channels, cache=cache, cache_dir=tmp_path)
    got = to_device(default_collate([feed[i] for i in range(len(feed))]), "cpu")
    want = legacy_batch(task_dataset(synthetic, task, "test", size=SIZE, channels=channels))
    assert torch.equal(legacy_inputs(got), want["inputs"])  # element for element, float32
    np.testing.assert_array_equal(legacy_inputs(got).numpy(), numpy_inputs(synthetic, task, channels))
    assert got["views"].dtype == torch.float32 and got["views"].shape == (N_TEST, 9, SIZE, SIZE)
    assert got["question_id"] == want["question_id"]
    for key in ("n_primitives", "answer", "pose", "target"):
        assert (key in got) == (key in want)
        if key in got:
            assert got[key].dtype == want[key].dtype and torch.equal(got[key], want[key]), key


def test_items_are_uint8_with_the_views_once_per_question(synthetic, tmp_path):
    feed = feed_dataset(synthetic, "three_view_to_isometric", "test", size=SIZE, cache_dir=tmp_path)
    item = feed[0]
    assert item["views"].dtype == np.uint8 and item["views"].shape == (9, SIZE, SIZE)
    assert item["candidates"].dtype == np.uint8 and item["candidates"].shape == (4, 3, SIZE, SIZE)
    assert "drawing" not in item and item["answer"].dtype == np.int64
    iso = feed_dataset(synthetic, "isometric_to_pose", "test", size=SIZE, cache_dir=tmp_path)[0]
    assert iso["drawing"].shape == (3, SIZE, SIZE) and "candidates" not in iso
    pose = feed_dataset(synthetic, "pose_to_isometric", "test", cache_dir=tmp_path)[0]
    assert pose["views"].shape == (9, 32, 32)  # the drawings' own size without `size`
    assert pose["pose"].dtype == np.float32 and pose["pose"].sum() == 1.0


def test_the_cache_lives_outside_the_dataset_and_is_reused_while_the_table_is_unchanged(synthetic, tmp_path):
    before = sorted(p.relative_to(synthetic) for p in synthetic.rglob("*"))
    first = feed_dataset(synthetic, "isometric_to_pose", "train", size=SIZE, cache_dir=tmp_path)
    assert first.cache_path.is_relative_to(tmp_path)
    stamp = first.cache_path.stat()
    again = feed_dataset(synthetic, "isometric_to_pose", "train", size=SIZE, cache_dir=tmp_path)
    assert again.cache_path == first.cache_path
    assert (again.cache_path.stat().st_ino, again.cache_path.stat().st_mtime_ns) == (stamp.st_ino, stamp.st_mtime_ns)
    assert sorted(p.relative_to(synthetic) for p in synthetic.rglob("*")) == before
    other_size = feed_dataset(synthetic, "isometric_to_pose", "train", size=8, cache_dir=tmp_path)
    assert other_size.cache_path != first.cache_path and first.cache_path.is_file()  # sizes keep their own


def test_a_changed_table_rebuilds_the_cache_and_deletes_the_stale_one(tmp_path):
    out = make_dataset(tmp_path / "out", split_sizes={"train": 4, "val": 2, "test": 4})
    cache = tmp_path / "cache"
    old = feed_dataset(out, "pose_to_isometric", "train", size=SIZE, cache_dir=cache)
    old_first = old[0]
    table_path = split_path(out, "pose_to_isometric", "train")
    table = pq.read_table(table_path)
    pq.write_table(table.take(list(reversed(range(table.num_rows)))), table_path)  # a regenerated split
    new = feed_dataset(out, "pose_to_isometric", "train", size=SIZE, cache_dir=cache)
    assert new.cache_path != old.cache_path and not old.cache_path.exists()
    assert new[len(new) - 1]["question_id"] == old_first["question_id"]
    np.testing.assert_array_equal(new[len(new) - 1]["candidates"], old_first["candidates"])
    uncached = feed_dataset(out, "pose_to_isometric", "train", size=SIZE, cache=False)
    for i in range(len(new)):
        np.testing.assert_array_equal(new[i]["views"], uncached[i]["views"])


def test_a_torn_cache_file_is_rebuilt(synthetic, tmp_path):
    built = feed_dataset(synthetic, "three_view_to_isometric", "val", size=SIZE, cache_dir=tmp_path)
    want = built[1]["candidates"]
    data = built.cache_path.read_bytes()
    built.cache_path.write_bytes(data[: len(data) // 2])  # e.g. a copy cut short
    again = feed_dataset(synthetic, "three_view_to_isometric", "val", size=SIZE, cache_dir=tmp_path)
    assert again.cache_path.stat().st_size == len(data)
    np.testing.assert_array_equal(again[1]["candidates"], want)


def _build(out, cache_dir, barrier) -> None:
    barrier.wait()  # both processes decode and rename at the same time
    feed_dataset(out, "three_view_to_isometric", "train", size=SIZE, cache_dir=cache_dir)


def test_two_processes_building_one_cache_leave_a_whole_file(synthetic, tmp_path):
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_build, args=(synthetic, tmp_path, barrier)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0]
    cached = feed_dataset(synthetic, "three_view_to_isometric", "train", size=SIZE, cache_dir=tmp_path)
    files = [p for p in cached.cache_path.parent.iterdir()]
    assert files == [cached.cache_path]  # no temporary file left behind
    uncached = feed_dataset(synthetic, "three_view_to_isometric", "train", size=SIZE, cache=False)
    for i in range(len(cached)):
        np.testing.assert_array_equal(cached[i]["candidates"], uncached[i]["candidates"])


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_dataloader_workers_read_the_cache(synthetic, tmp_path, context):
    feed = feed_dataset(synthetic, "pose_to_isometric", "test", size=SIZE, cache_dir=tmp_path)
    assert pickle.loads(pickle.dumps(feed))._images is None  # the memory map is opened again in each worker
    loader = DataLoader(feed, batch_size=4, num_workers=2, multiprocessing_context=context, pin_memory=False)
    batches = list(loader)
    assert [len(b["question_id"]) for b in batches] == [4, 2]
    assert batches[0]["candidates"].dtype == torch.uint8 and batches[0]["candidates"].shape == (4, 4, 3, SIZE, SIZE)
    whole = default_collate([feed[i] for i in range(len(feed))])
    assert torch.equal(torch.cat([b["candidates"] for b in batches]), whole["candidates"])
    assert torch.equal(torch.cat([b["pose"] for b in batches]), whole["pose"])


def test_the_cache_command_builds_each_split(synthetic, tmp_path, capsys):
    cache = tmp_path / "c"
    assert main(["cache", str(synthetic), "--task", "isometric_to_pose", "--size", "8", "--cache-dir", str(cache)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"isometric_to_pose/{s}" for s in ("train", "val", "test")]
    assert "6 questions, 24 images of 8x8 px" in lines[2]
    assert all(line.endswith("(decoded)") for line in lines)
    assert len(list(cache.rglob("*.npy"))) == 3
    stamps = {p: p.stat().st_mtime_ns for p in cache.rglob("*.npy")}
    assert main(["cache", str(synthetic), "--task", "isometric_to_pose", "--size", "8", "--cache-dir", str(cache)]) == 0
    again = capsys.readouterr().out.splitlines()
    assert [line.replace("(already cached, nothing decoded)", "(decoded)") for line in again] == lines
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.npy")} == stamps  # nothing written again
    assert main(["cache", str(synthetic), "--task", "nope", "--cache-dir", str(cache)]) == 2
    assert "unknown task 'nope'" in capsys.readouterr().err
    assert os.listdir(cache) == ["feed"]
    blocked = tmp_path / "a_file"
    blocked.write_text("not a folder\n")
    assert main(["cache", str(synthetic), "--task", "isometric_to_pose", "--cache-dir", str(blocked)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot make the feed cache folder" in err[0] and "--cache-dir" in err[0]
