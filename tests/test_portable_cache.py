"""The portable feed cache: a split exported as one xz file loads from another path, with no PNG and no dataset
folder, into the same tensors as the PNG feed, for every task."""

from __future__ import annotations

import lzma
import shutil

import numpy as np
import pytest
from synthetic_dataset import make_dataset

torch = pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

from torch.utils.data import default_collate  # noqa: E402

from spare_gen.data.cachefile import MAGIC, SUFFIX, read_header  # noqa: E402
from spare_gen.data.feed import exported_feed, feed_dataset, legacy_inputs, open_feed, to_device  # noqa: E402
from spare_gen.cli import main  # noqa: E402

SIZE = 16
TASKS = ["three_view_to_isometric", "isometric_to_pose", "pose_to_isometric", "isometric_view_generation",
         "point_cloud_generation"]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("portable") / "out", split_sizes={"train": 5, "val": 2, "test": 6})


def batch_of(feed) -> dict:
    return to_device(default_collate([feed[i] for i in range(len(feed))]), "cpu")


@pytest.mark.parametrize("channels", ["rgb", "bgr"])
@pytest.mark.parametrize("task", TASKS)
def test_an_exported_split_moved_elsewhere_gives_the_png_feeds_tensors(synthetic, tmp_path, task, channels):
    feed = feed_dataset(synthetic, task, "test", size=SIZE, cache_dir=tmp_path / "c")
    written = feed.export(tmp_path / f"x{SUFFIX}", preset=1)
    moved = tmp_path / "elsewhere" / "renamed.bin"
    moved.parent.mkdir()
    shutil.move(written, moved)
    away = tmp_path / "gone"
    shutil.copytree(synthetic, away / "data")  # the dataset is not where it was when exported ...
    got = exported_feed(moved, channels=channels)
    shutil.rmtree(away)  # ... and nothing of it is left to read
    want = feed_dataset(synthetic, task, "test", size=SIZE, channels=channels, cache=False)  # decoded from PNG
    assert got.source == moved.resolve() and got.out is None and got.paths is None
    assert (got.task.value, got.split, got.size, len(got)) == (task, "test", (SIZE, SIZE), len(want))
    a, b = batch_of(got), batch_of(want)
    assert a.keys() == b.keys() and a["question_id"] == b["question_id"]
    for key in a:
        if key != "question_id":
            assert a[key].dtype == b[key].dtype and torch.equal(a[key], b[key]), key
    if task != "point_cloud_generation" and task != "isometric_view_generation":
        assert torch.equal(legacy_inputs(a), legacy_inputs(b))
    assert got.n_choices == want.n_choices and got.table_sha256 == want.table_sha256


def test_the_file_is_plain_xz_and_its_header_describes_the_split(synthetic, tmp_path):
    feed = feed_dataset(synthetic, "isometric_to_pose", "train", size=SIZE, cache_dir=tmp_path)
    path = feed.export(tmp_path / "i2p.sgcache.xz", name="synthetic", preset=1)
    with lzma.open(path) as fh:  # any xz reader sees the magic line first
        assert fh.read(len(MAGIC)) == MAGIC
    header = read_header(path)
    assert header["task"] == "isometric_to_pose" and header["split"] == "train"
    assert header["channels"] == "rgb" and header["view_order"] == ["f", "r", "t"]
    assert header["item_order"] == ["f", "r", "t", "iso"]
    assert header["images"]["shape"] == [4 * len(feed), 3, SIZE, SIZE] and header["size"] == [SIZE, SIZE]
    assert header["question_ids"] == feed.question_ids and len(header["table_sha256"]) == 64
    assert header["dataset"]["name"] == "synthetic" and header["n_choices"] == 4


def test_a_damaged_or_foreign_file_is_one_clear_error(synthetic, tmp_path):
    path = feed_dataset(synthetic, "isometric_to_pose", "val", size=SIZE, cache_dir=tmp_path).export(
        tmp_path / "v.sgcache.xz", preset=1)
    data = bytearray(path.read_bytes())
    data[-40] ^= 0xFF
    (tmp_path / "bad.sgcache.xz").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged spare_gen feed cache"):
        exported_feed(tmp_path / "bad.sgcache.xz")
    (tmp_path / "cut.sgcache.xz").write_bytes(bytes(data[:len(data) // 2]))
    with pytest.raises(ValueError, match="truncated"):
        exported_feed(tmp_path / "cut.sgcache.xz")
    (tmp_path / "other.xz").write_bytes(lzma.compress(b"hello"))
    with pytest.raises(ValueError, match="not a spare_gen feed cache"):
        exported_feed(tmp_path / "other.xz")
    with pytest.raises(ValueError, match="holds 16x16 px images, not 32x32"):
        exported_feed(path, size=32)


def test_the_cache_command_exports_each_split_and_a_folder_of_them_feeds_training(synthetic, tmp_path, capsys):
    folder = tmp_path / "caches"
    assert main(["cache", str(synthetic), "--task", "three_view_to_isometric", "--size", str(SIZE), "--cache-dir",
                 str(tmp_path / "c"), "--xz-preset", "1", "--export", str(folder / "{task}-{split}.sgcache.xz")]) == 0
    names = sorted(p.name for p in folder.iterdir())
    assert names == [f"three_view_to_isometric-{s}.sgcache.xz" for s in ("test", "train", "val")]
    assert capsys.readouterr().out.count("KiB a question") == 3
    for split in ("train", "val", "test"):
        got, want = open_feed(folder, "three_view_to_isometric", split), feed_dataset(
            synthetic, "three_view_to_isometric", split, size=SIZE, cache=False)
        assert got.source is not None and got.question_ids == want.question_ids
        np.testing.assert_array_equal(got[len(got) - 1]["candidates"], want[len(want) - 1]["candidates"])
    with pytest.raises(FileNotFoundError, match="no exported cache of isometric_to_pose/train"):
        open_feed(folder, "isometric_to_pose", "train")


def test_an_export_pattern_that_several_splits_would_share_is_one_line_exit_2(synthetic, tmp_path, capsys):
    assert main(["cache", str(synthetic), "--task", "isometric_to_pose", "--cache-dir", str(tmp_path),
                 "--export", str(tmp_path / "one.sgcache.xz")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "name {split} in it when exporting several splits" in lines[0]
    assert not list(tmp_path.glob("*.sgcache.xz"))
