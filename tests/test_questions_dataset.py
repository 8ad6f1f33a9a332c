"""End to end: a small CSG question dataset obeys every rule, loads, validates, and regenerates byte for byte."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from spare_gen.jobs.regenerate import run
from spare_gen.store import shards
from spare_gen.store.packed import drawing_bytes
from spare_gen.config import load_config
from spare_gen.stages.questions.near_duplicate import Drawing, near_duplicate
from spare_gen.stages.questions.publish.files import sha256_file
from spare_gen.stages.questions.select import split_sizes
from spare_gen.stages.questions.layout import SPLITS, pose_view
from spare_gen.stages.questions.publish.preview import CAPTION
from spare_gen.stages.questions.sheet_cells import CELL, CUBE_POSE, PAD, pose_cube_image
from spare_gen.validate import main as validate_main
from spare_gen.config.schema import TaskName
from spare_gen.rows import rows_from_table
from spare_gen.stages.questions.tasks import TASK_SPECS, path_columns, question_row
from spare_gen.stages.questions.validate import validate

COUNTS = {"three_view_to_isometric": 4, "isometric_to_pose": 8, "pose_to_isometric": 8,
          "isometric_view_generation": 3, "point_cloud_generation": 3}
TOLERANCE = 1.5


def config_args(out: Path, *extra: str) -> list[str]:
    counts = ", ".join(f"{k} = {v}" for k, v in COUNTS.items())
    return [f'out="{out}"', "runner.progress=false", "runner.dashboard=false", "runner.workers=1",
            "models.csg.count=36", "pool.enabled=false", f"questions.counts={{{counts}}}",
            f"questions.duplicate_tolerance_px={TOLERANCE}", *extra]




@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("questions") / "ds"
    run(load_config(None, config_args(out)), stages=("models", "drawings", "questions"))
    return out


def rows(out: Path, task: str) -> dict[str, list[dict]]:
    result = {}
    for split in SPLITS:
        path = out / "questions" / task / f"{split}.parquet"
        result[split] = pq.read_table(path).to_pylist() if path.exists() else []
    return result


def all_rows(out: Path):
    for task in COUNTS:
        for split, rs in rows(out, task).items():
            for r in rs:
                yield task, split, r


def row_paths(row: dict, task: str) -> list[str]:
    """Every file path a table row names, column by column (the reference ``QuestionCommon.paths`` is checked
    against)."""
    values = [row.get(col) for col in path_columns(TaskName(task))]
    return [p for v in values if v is not None for p in (v if isinstance(v, (list, tuple)) else [v])]


def views(out: Path) -> dict[tuple[str, str], dict]:
    return {(r["model_id"], r["view"]): r for r in pq.read_table(out / "views.parquet").to_pylist()}


def sources(out: Path) -> dict[str, str]:
    """Per-question copy -> the drawing-stage file it copies (pose tasks' answer-side drawings)."""
    return {r["path"]: r["source"] for r in pq.read_table(out / "questions" / "file_sources.parquet").to_pylist()}


def test_counts_and_8_1_1_splits_load_with_pandas_and_every_file_exists(dataset):
    for task, n in COUNTS.items():
        sizes = []
        for split in SPLITS:
            path = dataset / "questions" / task / f"{split}.parquet"
            df = pd.read_parquet(path) if path.exists() else pd.DataFrame()
            sizes.append(len(df))
            assert (df.get("split", pd.Series(dtype=str)) == split).all()
        assert sizes == split_sizes(n, (0.8, 0.1, 0.1)), task
    for task, _, r in all_rows(dataset):
        for p in row_paths(r, task):
            assert not Path(p).is_absolute() and (dataset / p).is_file(), p


def test_answers_uniform_per_task_and_split(dataset):
    for task in ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric"):
        for split, rs in rows(dataset, task).items():
            counts = Counter(r["answer"] for r in rs)
            assert set(counts) <= {0, 1, 2, 3}
            assert max(counts.get(i, 0) for i in range(4)) - min(counts.get(i, 0) for i in range(4)) <= 1
    train = rows(dataset, "isometric_to_pose")["train"]  # 8 questions split 6/1/1: answers twice, twice, once, once
    assert len(train) == 6 and sorted(Counter(r["answer"] for r in train).values()) == [1, 1, 2, 2]


def test_each_model_and_drawing_used_once_across_all_tasks(dataset):
    models = Counter(r["model_id"] for _, _, r in all_rows(dataset))
    assert len(models) == sum(COUNTS.values()) and max(models.values()) == 1
    files = Counter(p for t, _, r in all_rows(dataset) for p in row_paths(r, t))
    assert max(files.values()) == 1


def test_only_unflagged_models_and_equal_primitive_mix_per_split(dataset):
    drawings = {r["model_id"]: r for r in pq.read_table(dataset / "drawings.parquet").to_pylist()}
    prims = {r["model_id"]: r["n_primitives"] for r in pq.read_table(dataset / "models.parquet").to_pylist()}
    for task, split, r in all_rows(dataset):
        d = drawings[r["model_id"]]
        assert d["usable"] and not (d["blank"] or d["tiny"] or d["duplicate"])
        assert r["n_primitives"] == prims[r["model_id"]]
    for task in COUNTS:
        for split, rs in rows(dataset, task).items():
            mix = Counter(r["n_primitives"] for r in rs)
            assert max(mix.get(k, 0) for k in (2, 3, 4)) - min(mix.get(k, 0) for k in (2, 3, 4)) <= 1, (task, split)


def test_candidates_are_distinct_drawings_and_answers_are_right(dataset):
    v = views(dataset)
    cut = {r["svg"]: r for r in pq.read_table(dataset / "questions" / "cut_views.parquet").to_pylist()}
    copied = sources(dataset)
    by_svg = {**{r["svg"]: r for r in v.values()}, **cut}
    for task, _, r in all_rows(dataset):
        if task == "isometric_to_pose":
            mid = r["model_id"]
            choices = [Drawing.from_view(v[(mid, pose_view(p))]) for p in r["choice_poses"]]
            assert copied[r["iso_svg"]] == v[(mid, pose_view(r["choice_poses"][r["answer"]]))]["svg"]
            assert (dataset / r["iso_png"]).read_bytes() == (dataset / copied[r["iso_png"]]).read_bytes()
        elif task in ("three_view_to_isometric", "pose_to_isometric"):
            choices = [Drawing.from_view(by_svg[copied.get(s, s)]) for s in r["candidate_svg"]]
            hashes = [sha256_file(dataset / p) for p in r["candidate_png"]]
            assert len(set(hashes)) == 4
        else:
            continue
        for i in range(4):
            for j in range(i + 1, 4):
                assert not near_duplicate(choices[i], choices[j], TOLERANCE), (r["question_id"], i, j)
        if task == "pose_to_isometric":
            assert len(set(r["candidate_poses"])) == 4 and r["candidate_poses"][r["answer"]] == r["pose"]
            assert copied[r["candidate_svg"][r["answer"]]] == v[(r["model_id"], pose_view(r["pose"]))]["svg"]


def test_three_view_candidates_are_cut_objects_at_the_models_scale(dataset):
    cut = {r["svg"]: r for r in pq.read_table(dataset / "questions" / "cut_views.parquet").to_pylist()}
    for r in rows(dataset, "three_view_to_isometric")["train"]:
        source = cut[r["front_svg"]]
        answer = cut[r["candidate_svg"][r["answer"]]]
        assert (source["model_id"], source["cut"]) == (answer["model_id"], answer["cut"]) == (r["model_id"], 0)
        assert sorted(cut[s]["cut"] for s in r["candidate_svg"]) == [0, 1, 2, 3]
        assert all((dataset / s).read_bytes().startswith(b"ISO-10303-21") for s in r["candidate_step"])
        cutters = json.loads(r["cutters"])
        assert len(cutters) == 4 and {c["type"] for c in cutters} <= {"sphere", "box", "cone", "torus"}
    # same canvas for model and cut drawings, and all images of a task the same size
    for task in COUNTS:
        sizes = {Image.open(dataset / p).size for t, _, r in all_rows(dataset) if t == task
                 for p in row_paths(r, t) if p.endswith(".png")}
        assert sizes == {(200, 200)}, task


def test_point_clouds_lie_on_the_model_surface(dataset):
    import trimesh

    from spare_gen import cad
    from spare_gen.cad.tessellate import triangulate

    brep = {r["model_id"]: r["brep_path"] for r in pq.read_table(dataset / "models.parquet").to_pylist()}
    for _, _, r in ((t, s, r) for t, s, r in all_rows(dataset) if t == "point_cloud_generation"):
        points = np.asarray(r["points"])
        assert points.shape == (2025, 3) and r["n_points"] == 2025
        assert pq.read_table(dataset / "questions/point_cloud_generation/train.parquet").schema.field(
            "points").type.value_type.value_type.bit_width == 32
        assert np.unique(points, axis=0).shape[0] == 2025  # sampled, not the mesh's vertices
        shape = cad.read_shape(dataset / brep[r["model_id"]])
        some = points[::20]  # closest_point_naive (no rtree needed) is all points x all triangles
        same = trimesh.Trimesh(*triangulate(shape, r["deflection"]))  # the sampled mesh itself
        diagonal = float(np.linalg.norm(same.bounds[1] - same.bounds[0]))
        assert trimesh.proximity.closest_point_naive(same, some)[1].max() < 1e-6 * diagonal
        finer = trimesh.Trimesh(*triangulate(shape, r["deflection"] / 4))  # closer to the exact surface
        assert trimesh.proximity.closest_point_naive(finer, some)[1].max() <= 1.5 * r["deflection"]


def test_card_and_contact_sheets(dataset):
    card = (dataset / "README.md").read_text()
    summary = json.loads((dataset / "questions" / "summary.json").read_text())
    assert "| `pose_to_isometric` | 8 | 8 | 6 | 1 | 1 | 8 |" in card
    assert "## Rejections by rule" in card and "## Versions" in card and '"seed": 0' in card
    assert summary["produced"]["isometric_to_pose"] == {"train": 6, "val": 1, "test": 1}
    for task in COUNTS:
        sheet = np.asarray(Image.open(dataset / "preview" / f"{task}.png").convert("RGB")).astype(int)
        assert _green(sheet).sum() > 4 * 160, task  # at least one full green frame


def _green(sheet: np.ndarray) -> np.ndarray:
    return (sheet[..., 1] > 150) & (sheet[..., 0] < 40) & (sheet[..., 2] < 40)


def test_each_contact_sheet_has_an_svg_twin_made_of_the_drawings_own_lines(dataset):
    """``preview/<task>.svg``: the PNG's layout at the same pixels (cairosvg's rendering frames the same answers in
    the same green pixels, with about as much ink), each drawing nested as its own SVG's paths, no raster inside."""
    import io
    import re
    import xml.etree.ElementTree as ET

    import cairosvg

    for task in COUNTS:
        text = (dataset / "preview" / f"{task}.svg").read_text()
        root = ET.fromstring(text.encode())
        ns = "{http://www.w3.org/2000/svg}"
        assert not list(root.iter(f"{ns}image")), task  # no raster picture inside
        ids = [e.get("id") for e in root.iter() if e.get("id")]
        assert len(ids) == len(set(ids)), task
        cells = [e for e in root if e.tag == f"{ns}svg"]
        assert len(cells) >= 3 * 4, task  # F, R, T and the task's own cells, 3 questions
        png = np.asarray(Image.open(dataset / "preview" / f"{task}.png").convert("RGB")).astype(int)
        drawn = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(bytestring=text.encode()))).convert("RGB")).astype(int)
        assert drawn.shape == png.shape, task
        assert _green(png).sum() > 4 * 160 and (_green(png) == _green(drawn)).all(), task
        ink_png, ink_svg = (png.min(axis=2) < 200).sum(), (drawn.min(axis=2) < 200).sum()
        assert 0.75 * ink_png < ink_svg < 1.25 * ink_png, (task, ink_png, ink_svg)
    by_split = rows(dataset, "isometric_view_generation")
    first = next(r for split in reversed(SPLITS) for r in by_split[split])  # the sheet's first question
    target = drawing_bytes(dataset, first["target_svg"]).decode()  # packed in the views table or a file
    sheet = (dataset / "preview" / "isometric_view_generation.svg").read_text()
    paths = re.findall(r'<path d="[^"]+"/>', target)
    assert paths and all(p in sheet for p in paths)  # the target drawing's own lines, word for word


def _sheet_cell(sheet: np.ndarray, row: int, col: int) -> np.ndarray:
    """Cell (row, col) of a contact sheet, its inner part (a green frame covers 2 px of the rim)."""
    top = PAD + row * (CAPTION * 2 + CELL + PAD) + 2 * CAPTION
    left = PAD + col * (CELL + PAD)
    return sheet[top + 2:top + CELL - 2, left + 2:left + CELL - 2]


def test_the_pose_sheets_draw_each_pose_on_the_pose_cube_not_a_blank_box(dataset):
    blue = np.array(CUBE_POSE)
    with Image.open(dataset / "preview" / "isometric_to_pose.png") as im:
        i2p = np.asarray(im.convert("RGB")).astype(int)
    n_rows = (i2p.shape[0] - PAD) // (CAPTION * 2 + CELL + PAD)
    assert n_rows == 3
    for r in range(n_rows):
        choices = [_sheet_cell(i2p, r, 4 + k) for k in range(4)]
        for k, (cell, p) in enumerate(zip(choices, (1, 2, 3, 4))):  # the default choice poses
            cube = np.asarray(pose_cube_image((p,))).astype(int)[2:-2, 2:-2]
            assert np.array_equal(cell, cube), (r, k)
            assert (np.abs(cell - blue).sum(axis=2) < 60).sum() > 400  # the filled pose dot, not a white box
            assert (cell < 200).all(axis=2).sum() > 300  # the cube's edges
        assert all(not np.array_equal(a, b) for i, a in enumerate(choices) for b in choices[i + 1:])
    with Image.open(dataset / "preview" / "pose_to_isometric.png") as im:
        p2i = np.asarray(im.convert("RGB")).astype(int)
    cubes = {p: np.asarray(pose_cube_image((p,))).astype(int)[2:-2, 2:-2] for p in range(1, 9)}
    for r in range(3):  # the query pose (input, after F, R, T) is one of the 8 cubes
        assert any(np.array_equal(_sheet_cell(p2i, r, 3), c) for c in cubes.values()), r


def test_validate_passes_on_a_fresh_dataset(dataset, capsys):
    assert validate(dataset) == []
    assert validate_main(dataset) == 0
    assert capsys.readouterr().out.startswith("OK:")


def _copy(dataset: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(dataset, dst, ignore=shutil.ignore_patterns(".units"))
    return dst


def _edit(path: Path, edit) -> None:
    """Edit the rows of a table (each part of a folder of parts) in place."""
    for part in shards.parts(path):
        table = pq.read_table(part)
        rs = table.to_pylist()
        edit(rs)
        pq.write_table(table.from_pylist(rs, schema=table.schema), part)


def test_validate_catches_a_deleted_file(dataset, tmp_path, capsys):
    out = _copy(dataset, tmp_path)
    victim = rows(out, "pose_to_isometric")["train"][0]["candidate_png"][2]
    (out / victim).unlink()
    problems = validate(out)
    assert any(victim in p and "does not exist" in p for p in problems)
    assert validate_main(out) == 1


def test_validate_catches_two_identical_candidates(dataset, tmp_path):
    out = _copy(dataset, tmp_path)
    path = out / "questions/pose_to_isometric/train.parquet"

    def same(rs):
        r = rs[0]
        r["candidate_svg"][1], r["candidate_png"][1] = r["candidate_svg"][0], r["candidate_png"][0]
    _edit(path, same)
    assert any("names the same candidate file twice" in p for p in validate(out))


def test_validate_catches_a_candidate_file_replaced_by_another(dataset, tmp_path):
    out = _copy(dataset, tmp_path)
    r = rows(out, "three_view_to_isometric")["train"][0]
    shutil.copy(out / r["candidate_png"][0], out / r["candidate_png"][3])
    problems = validate(out)
    assert any("identical PNGs" in p for p in problems)
    assert any(r["candidate_png"][3] in p and "SHA-256" in p for p in problems)


def test_validate_catches_a_pose_copy_that_is_not_its_source(dataset, tmp_path):
    """A per-question copy whose recorded source is another pose's drawing (or whose bytes differ) is caught."""
    out = _copy(dataset, tmp_path)
    r = rows(out, "pose_to_isometric")["train"][0]
    table = pq.read_table(out / "questions/file_sources.parquet")
    other_pose = r["candidate_poses"][(r["answer"] + 1) % 4]
    wrong = {r["candidate_svg"][r["answer"]]: f"drawings/{r['model_id']}/{other_pose}.svg"}
    pq.write_table(table.from_pylist([{**x, "source": wrong.get(x["path"], x["source"])} for x in table.to_pylist()],
                                     schema=table.schema), out / "questions/file_sources.parquet")
    problems = validate(out)
    assert any(f"{r['question_id']}: the answer is not the model's pose-{r['pose']} drawing" in p for p in problems)
    assert any(r["candidate_svg"][r["answer"]] in p and "is not a copy of" in p for p in problems)


def test_validate_catches_a_model_in_two_splits(dataset, tmp_path):
    out = _copy(dataset, tmp_path)
    train = rows(out, "isometric_view_generation")["train"]
    moved = dict(train[0], split="test", question_id="isometric_view_generation-test-00099")
    schema = pq.read_table(out / "questions/isometric_view_generation/train.parquet").schema
    pq.write_table(pq.read_table(out / "questions/isometric_view_generation/train.parquet").from_pylist(
        [moved], schema=schema), out / "questions/isometric_view_generation/test.parquet")
    problems = validate(out)
    assert any(f"model {train[0]['model_id']} is used by 2 questions" in p for p in problems)


def test_validate_catches_unbalanced_answers_and_wrong_answers(dataset, tmp_path):
    out = _copy(dataset, tmp_path)
    path = out / "questions/isometric_to_pose/train.parquet"

    def all_zero(rs):
        for r in rs:
            r["answer"] = 0
    _edit(path, all_zero)
    problems = validate(out)
    assert any("isometric_to_pose train: answer counts" in p for p in problems)
    assert any("iso drawing is not the model's pose" in p for p in problems)


def test_validate_names_a_column_the_task_does_not_declare_and_checks_the_rest(dataset, tmp_path):
    out = _copy(dataset, tmp_path)
    path = out / "questions/pose_to_isometric/train.parquet"
    table = pq.read_table(path)
    pq.write_table(table.append_column("leak", pa.array(["x"] * table.num_rows)), path)
    assert validate(out) == [f"load: {path} has columns the pose_to_isometric table does not declare: leak "
                             "(left out of the checks)"]

    def all_zero(rs):
        for r in rs:
            r["answer"] = 0
    _edit(path, all_zero)
    assert any("pose_to_isometric train: answer counts" in p for p in validate(out))


def test_typed_question_rows_name_the_same_files_answers_and_choices_as_the_table(dataset):
    for task, split, r in all_rows(dataset):
        typed = rows_from_table(question_row(task), pq.read_table(dataset / "questions" / task / f"{split}.parquet"))
        row = next(t for t in typed if t.question_id == r["question_id"])
        assert row.paths() == row_paths(r, task) and row.paths()
        assert row.correct_answer() == r.get("answer")
        assert row.candidates("png") == (r.get("candidate_png") or [])
        assert row.three_views("svg") == {"f": r["front_svg"], "r": r["right_svg"], "t": r["top_svg"]}
        assert TASK_SPECS[TaskName(task)].n_choices(row) == (len(r["candidate_svg"]) if "candidate_svg" in r else
                                                             len(r.get("choice_poses") or []))


def test_validate_catches_a_flagged_model(dataset, tmp_path):
    out = _copy(dataset, tmp_path)
    used = rows(out, "point_cloud_generation")["train"][0]["model_id"]

    def flag(rs):
        for r in rs:
            if r["model_id"] == used:
                r["tiny"], r["usable"] = True, False
    _edit(out / "drawings.parquet", flag)
    assert any(f"uses model {used} (tiny)" in p for p in validate(out))


def test_too_many_questions_stop_before_any_work(dataset, tmp_path):
    from spare_gen.stages.questions.driver import run_questions
    from spare_gen.stages.questions.select import NotEnoughModels

    out = _copy(dataset, tmp_path)
    cfg = load_config(None, config_args(out, "questions.counts.point_cloud_generation=500"))
    with pytest.raises(NotEnoughModels, match=r"need \d+ usable models, \d+ are usable"):
        run_questions(None, cfg, out)  # no Dask client: it must stop in planning


def test_same_config_gives_identical_bytes(dataset, tmp_path):
    """Rerun the question stage from the same models and drawings (2 workers instead of 1): same bytes."""
    again = tmp_path / "again"
    again.mkdir()
    for name in ("models", "drawings"):
        shutil.copytree(dataset / name, again / name)
    for name in ("models.parquet", "views.parquet", "drawings.parquet"):  # folders of parts
        shutil.copytree(dataset / name, again / name)
    run(load_config(None, config_args(again, "runner.workers=2")), stages=("questions",))
    for folder in ("questions", "preview"):
        first = sorted(p.relative_to(dataset) for p in (dataset / folder).rglob("*") if p.is_file())
        second = sorted(p.relative_to(again) for p in (again / folder).rglob("*") if p.is_file())
        assert first == second
        for rel in first:
            if rel.name != "timings.json":
                assert (dataset / rel).read_bytes() == (again / rel).read_bytes(), rel
    assert (dataset / "README.md").read_bytes() == (again / "README.md").read_bytes()
