"""``render.store = "parquet"``: drawings packed into the views parts (PNG as a Hugging Face Image struct, SVG text).

One small real run per store (same config otherwise), shared by every test of the module.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from spare_gen.store import inventory, ownership, packed, shards
from spare_gen.config.schema import TaskName

REPO = Path(__file__).resolve().parents[1]
SPARE_GEN = Path(sys.executable).with_name("spare-gen")
OVERRIDES = [
    "models.csg.count=30", "pool.enabled=false", "questions.allow_fewer=true", "runner.shard_units=8",
    "runner.progress=false", "runner.dashboard=false",
    "questions.counts.three_view_to_isometric=4", "questions.counts.isometric_to_pose=10",
    "questions.counts.pose_to_isometric=4", "questions.counts.isometric_view_generation=0",
    "questions.counts.point_cloud_generation=0",
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """{"files": out, "parquet": out}: the same config with each store."""
    from spare_gen.jobs.regenerate import run
    from spare_gen.config import load_config

    outs = {}
    for store in ("files", "parquet"):
        out = tmp_path_factory.mktemp(f"store_{store}") / "out"
        run(load_config(REPO / "configs" / "default.toml", [f'out="{out}"', f'render.store="{store}"', *OVERRIDES]))
        outs[store] = out
    return outs


def test_parquet_store_writes_no_drawing_files_and_packs_decodable_pngs(runs):
    out = runs["parquet"]
    assert not (out / "drawings").exists() or not any(p.is_file() for p in (out / "drawings").rglob("*"))
    assert len(shards.parts(out / "views.parquet")) >= 2  # 30 models, 8 per part: the index spans parts
    views = shards.read(out / "views.parquet", ["png", "svg", "png_sha256", "svg_sha256", "png_image", "svg_text",
                                               "status"]).to_pylist()
    ok = [v for v in views if v["status"] == "ok"]
    assert len(ok) > 100
    for v in ok:
        data = v["png_image"]["bytes"]
        assert v["png_image"]["path"] == v["png"] and v["png"].startswith("drawings/")
        assert hashlib.sha256(data).hexdigest() == v["png_sha256"]
        assert hashlib.sha256(v["svg_text"].encode()).hexdigest() == v["svg_sha256"]
        with Image.open(io.BytesIO(data)) as im:
            assert im.size == (200, 200) and im.format == "PNG"
        assert packed.drawing_bytes(out, v["png"]) == data  # the resolver reads the same bytes
        assert packed.drawing_bytes(out, v["svg"]) == v["svg_text"].encode()
    # resume data names no drawing file, so a rerun can reuse every unit
    for index in (out / ".units" / "drawings").glob("part-*.json"):
        for entry in json.loads(index.read_text())["units"].values():
            assert not [f for f in entry["files"] if f.startswith("drawings/")]


def test_packed_bytes_equal_the_files_of_a_files_run(runs):
    files, parquet = runs["files"], runs["parquet"]
    rows = shards.read(files / "views.parquet", ["png", "svg", "png_sha256"]).to_pylist()
    assert rows == shards.read(parquet / "views.parquet", ["png", "svg", "png_sha256"]).to_pylist()
    for r in rows[::7]:
        if r["png"]:
            assert packed.drawing_bytes(parquet, r["png"]) == (files / r["png"]).read_bytes()
            assert packed.drawing_bytes(parquet, r["svg"]) == (files / r["svg"]).read_bytes()


def test_validate_passes_and_checks_packed_bytes_against_their_hash(runs, tmp_path):
    out = runs["parquet"]
    result = subprocess.run([str(SPARE_GEN), "validate", str(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK:" in result.stdout
    # a packed PNG swapped for another view's (and dataset.json's table hashes made to match) is reported
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    part = shards.parts(copy / "views.parquet")[0]
    table = pq.read_table(part)
    images = table.column("png_image").to_pylist()
    rel = images[0]["path"]
    images[0] = {"bytes": images[1]["bytes"], "path": rel}
    table = table.set_column(table.schema.get_field_index("png_image"), "png_image",
                             pa.array(images, packed.IMAGE_TYPE))
    pq.write_table(table, part)
    problems = inventory.check(copy, inventory.table_hashes(copy))
    assert len(problems) == 1 and rel in problems[0] and "packed bytes" in problems[0], problems


def test_loaders_give_the_same_arrays_for_both_stores(runs):
    from spare_gen.data import iter_questions

    task = TaskName.ISOMETRIC_TO_POSE
    split = max(("train", "val", "test"), key=lambda s: pq.read_metadata(
        runs["files"] / "questions" / task.value / f"{s}.parquet").num_rows)
    a = list(iter_questions(runs["files"], task, split))
    b = list(iter_questions(runs["parquet"], task, split))
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert x["question_id"] == y["question_id"]
        for v in ("f", "r", "t"):
            assert x["views"][v].shape == (200, 200, 3)
            np.testing.assert_array_equal(x["views"][v], y["views"][v])
        np.testing.assert_array_equal(x["iso"], y["iso"])
    # answer-side copies and questions/files.parquet are the same bytes in both runs
    for name in ("questions/files.parquet", f"questions/{task.value}/{split}.parquet"):
        assert pq.read_table(runs["files"] / name).equals(pq.read_table(runs["parquet"] / name))


def test_every_derived_file_is_the_same_for_both_stores(runs):
    """Question tables, per-question copies, cut drawings, hf/ tables with embedded images, contact sheets and the
    audit read drawings through ``spare_gen.store.packed``: byte for byte what a files run makes."""
    def digests(out: Path) -> dict[str, str]:
        return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for top in ("questions", "hf", "preview", "reports") for p in sorted((out / top).rglob("*"))
                if p.is_file() and p.name != "timings.json"}

    files, parquet = digests(runs["files"]), digests(runs["parquet"])
    assert any(k.startswith("hf/") for k in files) and any(k.startswith("preview/") for k in files)
    assert files == parquet


def test_hugging_face_datasets_decodes_png_image_as_an_image(runs, tmp_path):
    from datasets import load_dataset

    ds = load_dataset("parquet", data_files=str(runs["parquet"] / "views.parquet" / "*.parquet"), split="train",
                      cache_dir=str(tmp_path / "hf"))
    assert type(ds.features["png_image"]).__name__ == "Image"
    row = next(r for r in ds if r["status"] == "ok")
    assert row["png_image"].size == (200, 200)
    assert row["svg_text"].startswith("<svg") or "<svg" in row["svg_text"][:200]


def test_a_stale_drawing_file_is_removed_only_if_spare_gen_wrote_it_and_is_never_read(runs):
    out = runs["parquet"]
    rel = next(r for r in shards.read(out / "views.parquet", ["png"]).column("png").to_pylist() if r)
    packed_png = packed.drawing_bytes(out, rel)
    stale = out / rel
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"a file at a packed drawing's path")
    assert packed.drawing_bytes(out, rel) == packed_png  # the table wins over a stale file
    assert rel not in inventory.unreferenced(out)  # no record says spare_gen wrote it: not its to remove
    assert inventory.remove_unreferenced(out) == [] and stale.exists()
    ownership.record(out, [rel])  # as a run with render.store = "files" records the drawings its units wrote
    assert rel in inventory.unreferenced(out)
    assert inventory.remove_unreferenced(out) == [rel] and not stale.exists()


def test_the_training_feed_reads_packed_drawings_as_it_reads_files(runs, tmp_path):
    pytest.importorskip("torch")
    from spare_gen.data.feed import feed_dataset

    for cache in (False, True):
        files, packed = (feed_dataset(runs[store], "pose_to_isometric", "train", cache=cache,
                                      cache_dir=tmp_path / store) for store in ("files", "parquet"))
        assert packed.packed and not files.packed and len(files) == len(packed) > 0
        for i in range(len(files)):
            for key in ("views", "candidates"):
                np.testing.assert_array_equal(files[i][key], packed[i][key])
