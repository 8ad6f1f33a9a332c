"""Loaders: tables, numpy items (PNG and vector sources) and the .npz export, checked against the files."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pyarrow.parquet as pq
import pytest
from synthetic_dataset import make_dataset

from spare_gen.jobs.export_npz import export
from spare_gen.data import DrawingVectors, iter_questions, load_rows, load_split, load_split_pandas, read_image
from spare_gen.data.tables import three_view_columns
from spare_gen.stages.questions.tasks import question_row

MC_CANDIDATE_TASKS = ("three_view_to_isometric", "pose_to_isometric")
ALL_TASKS = ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric", "isometric_view_generation",
             "point_cloud_generation")


def decode_png(path) -> np.ndarray:
    """An 8-bit RGB or RGBA PNG to (H, W, 3) uint8 with zlib alone (all five row filters), to check Pillow's."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    out = np.zeros((height, stride), dtype=np.int64)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        prev = out[y - 1] if y else np.zeros(stride, np.int64)
        if ftype in (0, 2):
            out[y] = (line + (prev if ftype == 2 else 0)) % 256
            continue
        row = np.zeros(stride, np.int64)
        for x in range(stride):
            a = row[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                pred = a
            elif ftype == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
            row[x] = (line[x] + pred) % 256
        out[y] = row
    return out.reshape(height, width, bpp)[:, :, :3].astype(np.uint8)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("loaders") / "out", split_sizes={"train": 4, "val": 2, "test": 6})


def test_load_split_reads_the_parquet_and_rejects_bad_names(synthetic, tmp_path):
    table = load_split(synthetic, "pose_to_isometric", "test")
    assert table.equals(pq.read_table(synthetic / "questions" / "pose_to_isometric" / "test.parquet"))
    frame = load_split_pandas(synthetic, "pose_to_isometric", "test")
    assert list(frame["question_id"]) == table.column("question_id").to_pylist()
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        load_split(synthetic, "nope", "test")
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        load_split(synthetic, "pose_to_isometric", "dev")
    with pytest.raises(FileNotFoundError, match="point_cloud_generation/val.parquet"):
        load_split(tmp_path, "point_cloud_generation", "val")


@pytest.mark.parametrize("task", ALL_TASKS)
def test_load_rows_gives_the_split_as_its_task_row_class_column_for_column(synthetic, task):
    table = load_split(synthetic, task, "test")
    rows = load_rows(synthetic, task, "test")
    assert rows and all(type(r) is question_row(task) for r in rows)
    for name in table.column_names:
        assert [getattr(r, name) for r in rows] == table.column(name).to_pylist(), name
    assert [r.correct_answer() for r in rows] == (
        table.column("answer").to_pylist() if "answer" in table.column_names else [None] * len(rows))


@pytest.mark.parametrize("task", ALL_TASKS)
def test_png_items_equal_the_decoded_files(synthetic, task):
    rows = load_split(synthetic, task, "test").to_pylist()
    items = list(iter_questions(synthetic, task, "test"))
    assert [i["question_id"] for i in items] == [r["question_id"] for r in rows]
    for item, row in zip(items, rows):
        assert item["model_id"] == row["model_id"] and item["n_primitives"] == row["n_primitives"]
        for view, col in three_view_columns().items():
            img = item["views"][view]
            assert img.dtype == np.float32 and img.shape == (32, 32, 3)
            np.testing.assert_array_equal(img, decode_png(synthetic / row[col]) / np.float32(255))
        if task in MC_CANDIDATE_TASKS:
            assert item["candidates"].shape == (4, 32, 32, 3) and item["candidates"].dtype == np.float32
            for k, rel in enumerate(row["candidate_png"]):
                np.testing.assert_array_equal(item["candidates"][k], decode_png(synthetic / rel) / np.float32(255))
        if task == "isometric_to_pose":
            np.testing.assert_array_equal(item["iso"], decode_png(synthetic / row["iso_png"]) / np.float32(255))
        if task == "pose_to_isometric":
            assert item["pose"] == row["pose"]
        if task in ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric"):
            assert item["answer"] == row["answer"]
        else:
            assert "answer" not in item
        if task == "isometric_view_generation":
            np.testing.assert_array_equal(item["target"], decode_png(synthetic / row["target_png"]) / np.float32(255))
        if task == "point_cloud_generation":
            assert item["target"].dtype == np.float32 and item["target"].shape == (7, 3)
            np.testing.assert_array_equal(item["target"], np.asarray(row["points"], np.float32))


def test_resize_keeps_values_in_range_and_the_ink(synthetic):
    row = load_split(synthetic, "three_view_to_isometric", "test").to_pylist()[0]
    full = read_image(synthetic / row["front_png"])
    item = next(iter_questions(synthetic, "three_view_to_isometric", "test", size=(16, 8)))
    small = item["views"]["f"]
    assert small.shape == (16, 8, 3) and small.dtype == np.float32
    assert small.min() >= 0.0 and small.max() <= 1.0
    # a white canvas stays white, and the mean darkness survives the 2x4 reduction
    assert abs((1 - small).mean() - (1 - full).mean()) < 0.02
    assert item["candidates"].shape == (4, 16, 8, 3)
    with pytest.raises(ValueError, match="image size must be positive"):
        read_image(synthetic / row["front_png"], 0)


def test_vector_items_are_the_table_polylines(synthetic):
    views = {r["svg"]: r for r in pq.read_table(synthetic / "views.parquet").to_pylist() if r["svg"]}
    rows = load_split(synthetic, "three_view_to_isometric", "test").to_pylist()
    for item, row in zip(iter_questions(synthetic, "three_view_to_isometric", "test", source="vectors"), rows):
        for k, rel in enumerate(row["candidate_svg"]):
            got, want = item["candidates"][k], views[rel]
            assert len(got["visible"]) == len(want["visible"]) and len(got["hidden"]) == len(want["hidden"])
            for a, b in zip(got["visible"] + got["hidden"], want["visible"] + want["hidden"]):
                assert a.dtype == np.float64 and a.shape == (len(b), 2)
                np.testing.assert_array_equal(a, np.asarray(b))
        front = item["views"]["f"]
        np.testing.assert_array_equal(front["visible"][0], np.asarray(views[row["front_svg"]]["visible"][0]))
    vectors = DrawingVectors.load(synthetic, [rows[0]["front_svg"]])
    assert len(vectors) == 2  # the one drawing, by SVG and by PNG path
    with pytest.raises(KeyError, match="no vector drawing for 'nope.svg'"):
        vectors.get("nope.svg")
    with pytest.raises(ValueError, match="'pixels' is not a valid Source"):
        next(iter_questions(synthetic, "three_view_to_isometric", "test", source="pixels"))


def test_export_writes_uint8_arrays_of_the_split(synthetic, tmp_path):
    path = export(synthetic, "pose_to_isometric", "test", size=16, dest=tmp_path / "p2i.npz")
    rows = load_split(synthetic, "pose_to_isometric", "test").to_pylist()
    with np.load(path) as z:
        assert z["views"].shape == (6, 3, 16, 16, 3) and z["views"].dtype == np.uint8
        assert z["candidates"].shape == (6, 4, 16, 16, 3)
        assert list(z["answer"]) == [r["answer"] for r in rows] and list(z["pose"]) == [r["pose"] for r in rows]
        assert list(z["question_id"]) == [r["question_id"] for r in rows]
        first = next(iter_questions(synthetic, "pose_to_isometric", "test", size=16))
        np.testing.assert_array_equal(z["candidates"][0], np.round(first["candidates"] * 255).astype(np.uint8))
    path = export(synthetic, "point_cloud_generation", "test", size=16, dest=tmp_path / "pc.npz")
    with np.load(path) as z:
        assert z["target"].shape == (6, 7, 3) and z["target"].dtype == np.float32


def test_real_dataset_items_match_their_files(small_dataset):
    """The default config's dataset: every task's test items against the files and vector tables."""
    views = {r["svg"]: r for r in pq.read_table(small_dataset / "views.parquet",
                                                 columns=["svg", "visible", "hidden"]).to_pylist()}
    cuts = {r["svg"]: r for r in pq.read_table(small_dataset / "questions" / "cut_views.parquet",
                                                columns=["svg", "visible", "hidden"]).to_pylist()}
    copied = {r["path"]: r["source"] for r in pq.read_table(
        small_dataset / "questions" / "file_sources.parquet").to_pylist()}  # pose tasks' content-named copies
    for task in ALL_TASKS:
        rows = load_split(small_dataset, task, "test").to_pylist()
        assert rows, task
        items = list(iter_questions(small_dataset, task, "test"))
        vec_items = list(iter_questions(small_dataset, task, "test", source="vectors"))
        for item, vec, row in zip(items, vec_items, rows):
            front = item["views"]["f"]
            assert front.shape == (200, 200, 3) and front.dtype == np.float32
            np.testing.assert_array_equal(front, decode_png(small_dataset / row["front_png"]) / np.float32(255))
            assert 0.0 < (front < 1).mean() < 0.5  # some ink, mostly paper
            if "candidates" in item:
                k = item["answer"]
                np.testing.assert_array_equal(item["candidates"][k],
                                              decode_png(small_dataset / row["candidate_png"][k]) / np.float32(255))
                table = cuts if task == "three_view_to_isometric" else views
                want = table[copied.get(row["candidate_svg"][k], row["candidate_svg"][k])]
                assert len(vec["candidates"][k]["visible"]) == len(want["visible"])
                np.testing.assert_allclose(vec["candidates"][k]["visible"][0], np.asarray(want["visible"][0]))
            if task == "point_cloud_generation":
                assert item["target"].shape == (2025, 3) and item["target"].dtype == np.float32
