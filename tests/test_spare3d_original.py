"""The original SPARE3D generator's rules as options (configs/spare3d_csg_original.toml), each checked on real models.

- ``render.line_width_rule = "model_units"``: widths are model units scaled with the drawing, as the original's SVG
  strokes were once cairosvg rasterised them (it ignores ``vector-effect: non-scaling-stroke``): 0.7 units x canvas
  px per unit, measured in the SVG and as ink in the PNG on a small and a large model.
- ``questions.cutter_box = "brep"``: the spare3d cutters are sized and placed from OCCT's B-rep box
  (boolean.py's get_boundingbox), which on a tilted torus is 7 % larger than the tight box.
- ``questions.model_reuse = "per_task"``: every task gets its full count from the same models, more questions than
  models in all, each model in one split everywhere; the same counts without reuse do not fit.
- ``questions.symmetry_filter = "spare3d"``: I2P_filter.py's F/R/T score (checked against the original's code as
  written) drops the most symmetric quarter of the models from isometric_to_pose only, among them a cube drilled
  along Y, whose front view is its own half-turn.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from drawings_shapes import BOX, HOLED_BOX, L_BLOCK, prim, program, render_config, scaled, write_model
from spare_gen import cad
from spare_gen.cad.props import bounding_box, brep_bounding_box
from spare_gen.config import ConfigError, load_config
from spare_gen.config.base import BoxRule
from spare_gen.config.schema import TaskName
from spare_gen.config.tasks.three_view_to_isometric import Options as ThreeViewOptions
from spare_gen.stages.drawings.child import draw_model
from spare_gen.jobs.regenerate import run
from spare_gen.stages.questions.layout import SPLITS
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.tasks import question_settings
from spare_gen.stages.questions.tasks.isometric_to_pose import symmetric_models, three_view_difference
from spare_gen.stages.questions.tasks.three_view_to_isometric.child import make_cut_set
from spare_gen.stages.questions.tasks.three_view_to_isometric.cutters_spare3d import spare3d_cutter
from spare_gen.stages.questions.validate import validate
from spare_gen.rng import derive_rng
from tests.conftest import REPO, differing_files, spare_gen_cli

STROKE, HIDDEN_STROKE = 0.7, 0.35  # the original's line widths, model units (I2P_CSG.py, P2I.py, Three2I.py)
CANVAS, FACTOR = 200, 1.7  # SPARE3D-CSG: 200 px canvas, viewBox side 1.7 x the largest B-rep box edge


def _stroke_widths(svg: str) -> dict[str, float]:
    return {g: float(w) for g, w in re.findall(r'id="(visible|hidden)" stroke="#[0-9a-f]{6}" stroke-width="([^"]+)"',
                                               svg)}


def _black_run(png: Path) -> int:
    """Width (px) of the front view's left edge: the dark run where the middle row first meets ink."""
    with Image.open(png) as im:
        rgb = np.asarray(im.convert("RGB")).astype(int)
    row = rgb[rgb.shape[0] // 2]
    dark = np.flatnonzero(row.sum(axis=1) < 3 * 128)
    run_end = dark[0]
    while run_end + 1 < len(row) and row[run_end + 1].sum() < 3 * 128:
        run_end += 1
    return int(run_end - dark[0] + 1)


@pytest.mark.parametrize("factor", [2.0, 20.0])
def test_model_unit_line_widths_follow_the_originals_rule_on_a_small_and_a_large_model(tmp_path, factor):
    """A 4-unit box is drawn at about 29 px per unit (20.6 px lines), a 40-unit one at 2.9 px per unit (2.1 px)."""
    path = write_model(scaled(BOX, factor), tmp_path, "box")  # 2 x 1 x 1.5, times factor
    render = render_config(preset="spare3d_csg", line_width_rule="model_units")
    assert (render.visible_width, render.hidden_width) == (STROKE, HIDDEN_STROKE)  # the original's, not 2 / 1 px
    drawing = draw_model("box", path, str(tmp_path), render, None, "exact")
    px_per_unit = CANVAS / (FACTOR * 2.0 * factor)
    assert drawing["model"]["scale"] == pytest.approx(px_per_unit, rel=1e-4)
    views = {v["view"]: v for v in drawing["views"]}
    for view in views.values():
        widths = _stroke_widths((tmp_path / view["svg"]).read_text())
        assert widths["visible"] == pytest.approx(STROKE * px_per_unit, rel=1e-4)
        assert widths["hidden"] == pytest.approx(HIDDEN_STROKE * px_per_unit, rel=1e-4)
    assert _black_run(tmp_path / views["f"]["png"]) == pytest.approx(STROKE * px_per_unit, abs=1.5)
    fixed = draw_model("box_px", path, str(tmp_path), render_config(preset="spare3d_csg"), None, "exact")
    f_fixed = next(v for v in fixed["views"] if v["view"] == "f")
    assert _stroke_widths((tmp_path / f_fixed["svg"]).read_text()) == {"visible": 2.0, "hidden": 1.0}


# A torus tilted 35 degrees about X: OCCT's B-rep box of it is loose (the original's box), its tight box is not.
TILTED_TORUS = program([prim("torus", {"R": 1.0, "r": 0.35}, "x", 35)])


def test_spare3d_cutters_come_from_the_brep_box_on_a_torus(tmp_path):
    path = write_model(TILTED_TORUS, tmp_path, "torus")
    shape = cad.read_shape(path)
    brep, tight = np.array(brep_bounding_box(shape)), np.array(bounding_box(shape))
    assert (brep[3:] - brep[:3]).sum() > 1.05 * (tight[3:] - tight[:3]).sum()  # the rule matters on this model
    render = render_config(preset="spare3d_csg")
    drawing = draw_model("torus", path, str(tmp_path), render, None, "exact")
    unit = {"model_id": "torus", "shape_path": path, "hlr_method": "exact",
            "framing": {"scale": drawing["model"]["scale"], "center": drawing["model"]["center"]}}
    config = load_config(None, ['questions.cutters="spare3d"', 'questions.cutter_box="brep"',
                                'render.preset="spare3d_csg"'])
    settings = question_settings(config, tmp_path, TaskName.THREE_VIEW_TO_ISOMETRIC)
    assert settings.own(ThreeViewOptions).cutter_box is BoxRule.BREP and settings.hashed["cutter_box"] == "brep"
    cuts = make_cut_set(unit, settings)
    assert cuts["accepted"], cuts

    def drawn_from(box, k) -> bool:  # some attempt of cut k drew exactly this cutter from ``box``
        rngs = (derive_rng(0, "questions", TaskName.THREE_VIEW_TO_ISOMETRIC.value, "torus", "cut", k, a)
                for a in range(config.questions.max_cut_attempts))
        return cuts["cuts"][k]["cutter"] in [spare3d_cutter(tuple(box), rng) for rng in rngs]

    assert all(drawn_from(brep, k) for k in range(4))
    assert not any(drawn_from(tight, k) for k in range(4))
    default = question_settings(load_config(None, ['questions.cutters="spare3d"']), tmp_path,
                                TaskName.THREE_VIEW_TO_ISOMETRIC)
    assert default.own(ThreeViewOptions).cutter_box is BoxRule.TIGHT
    assert "cutter_box" not in default.hashed  # the default box is out of the fingerprint, as before the option


def original_get_sym(img1: np.ndarray, img2: np.ndarray, img3: np.ndarray) -> int:
    """I2P_filter.py's get_sym as written (cv2's BGR uint8 images, wrapping subtraction, np.size of np.nonzero)."""
    j = min(np.size(np.nonzero(img1 - img2)), np.size(np.nonzero(img1 - img3)))
    img2r = np.concatenate([img2[:, :, c].T[::-1, :].reshape(img2.shape[1], img2.shape[0], 1) for c in range(3)],
                           axis=2)
    return int(min(j, np.size(np.nonzero(img2r - img3)), np.size(np.nonzero(img1 - img1[::-1, ::-1]))))


def _bgr(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))[:, :, ::-1].copy()


def test_the_symmetry_score_is_the_originals_heuristic_on_real_drawings(tmp_path):
    """np.size(np.nonzero(...)) of an (H, W, 3) array counts each differing value 3 times; the ranking is the same."""
    for name, prog in {"holed_box": HOLED_BOX, "l_block": L_BLOCK, "box": BOX}.items():
        drawing = draw_model(name, write_model(prog, tmp_path, name), str(tmp_path), render_config(), None, "exact")
        png = {v["view"]: tmp_path / v["png"] for v in drawing["views"]}
        images = [_bgr(png[v]) for v in ("f", "r", "t")]
        assert 3 * three_view_difference(*images) == original_get_sym(*images) > 0
        assert three_view_difference(images[0], images[0], images[2]) == 0  # F = R: the most symmetric


def _box(dx, dy, dz, t=(0, 0, 0)):
    return {"type": "box", "params": {"dx": dx, "dy": dy, "dz": dz}, "translation": list(t)}


FILE_MODELS = {  # asymmetric models, plus a cube drilled along Y: its front view is its own half-turn
    "holed_box": HOLED_BOX,
    "l_block": L_BLOCK,
    "l_small": {"primitives": [_box(1.0, 0.6, 0.4), _box(0.3, 0.3, 0.8, (0.3, 0.1, 0.3))], "operations": ["union"]},
    "notched": program([_box(1.0, 0.8, 0.6), prim("sphere", {"r": 0.35}, at=(0.5, -0.4, 0.3))], ["difference"]),
    "drilled": program([_box(1.0, 0.7, 0.5), prim("cylinder", {"r": 0.12, "h": 1.0}, at=(0.25, 0.15, 0.0))],
                       ["difference"]),
    "cone_on_box": program([_box(0.9, 0.5, 0.3), prim("cone", {"r1": 0.25, "r2": 0.05, "h": 0.6}, "x", 90,
                                                      (0.2, 0.1, 0.35))], ["union"]),
    "stepped": program([_box(1.2, 0.5, 0.3), _box(0.4, 0.5, 0.5, (0.4, 0.0, 0.4))], ["union"]),
    "slot": program([_box(1.1, 0.9, 0.4), _box(0.3, 1.0, 0.2, (-0.3, 0.0, 0.15))], ["difference"]),
}
COUNTS = {"three_view_to_isometric": 0, "isometric_to_pose": 4, "pose_to_isometric": 4,
          "isometric_view_generation": 8, "point_cloud_generation": 8}


@pytest.fixture(scope="module")
def reused(tmp_path_factory) -> tuple[Path, list[str]]:
    """Eight file models, 24 questions: every task draws from the same models, the symmetry filter on."""
    root = tmp_path_factory.mktemp("reuse")
    for name, prog in FILE_MODELS.items():
        cad.write_step(cad.build_csg(prog), root / "cad" / f"{name}.step", name=name)
    counts = "{" + ", ".join(f"{t} = {n}" for t, n in COUNTS.items()) + "}"
    overrides = [f'out="{root / "out"}"', "runner.progress=false", "runner.dashboard=false", "runner.workers=1",
                 'models.source="files"', f'models.files.root="{root / "cad"}"', "pool.enabled=false",
                 f"questions.counts={counts}", 'questions.model_reuse="per_task"',
                 'questions.symmetry_filter="spare3d"']
    run(load_config(None, overrides), stages=("models", "drawings", "questions"))
    return root / "out", overrides


def _rows(out: Path, task: str) -> dict[str, list[dict]]:
    return {s: pq.read_table(out / f"questions/{task}/{s}.parquet").to_pylist()
            for s in SPLITS if (out / f"questions/{task}/{s}.parquet").exists()}


def test_model_reuse_gives_every_task_its_full_count_from_the_same_models(reused, tmp_path):
    out, overrides = reused
    summary = json.loads((out / "questions/summary.json").read_text())
    assert summary["model_reuse"] == "per_task"
    produced = {t: sum(n.values()) for t, n in summary["produced"].items()}
    assert produced == {t: n for t, n in COUNTS.items() if n}  # 24 questions from 8 models
    splits = {}  # model -> the splits it is in, over all tasks
    models = {}
    for task in produced:
        rows = _rows(out, task)
        models[task] = {r["model_id"] for split_rows in rows.values() for r in split_rows}
        assert sum(map(len, rows.values())) == len(models[task])  # once per task
        for split, split_rows in rows.items():
            for r in split_rows:
                splits.setdefault(r["model_id"], set()).add(split)
    assert models["isometric_view_generation"] == models["point_cloud_generation"] == set(FILE_MODELS)
    assert all(len(s) == 1 for s in splits.values())  # splits stay model-disjoint across the dataset
    assert validate(out) == []
    assert "at most one question per task" in (out / "README.md").read_text()
    once = tmp_path / "once"  # the same counts with each model used once: 24 questions do not fit 8 files
    shutil.copytree(out, once)
    before = differing_files(out, once)
    with pytest.raises(ConfigError, match=r"\(24 in all\) cannot be met: the inputs give at most 8 questions in all "
                                          r"tasks together \(models.files.root .* holds 8 CAD file\(s\)"):
        run(load_config(None, [*overrides[1:], f'out="{once}"', 'questions.model_reuse="once"']),
            stages=("questions",))
    assert differing_files(out, once) == before == []  # refused before any work


def test_validate_catches_a_reused_model_in_another_split_of_another_task(reused, tmp_path):
    out = tmp_path / "moved"
    shutil.copytree(reused[0], out)
    task = "point_cloud_generation"
    train = pq.read_table(out / f"questions/{task}/train.parquet")
    row = train.to_pylist()[0]
    moved = dict(row, split="test", question_id=f"{task}-test-00099")
    test = pq.read_table(out / f"questions/{task}/test.parquet")
    pq.write_table(test.from_pylist([*test.to_pylist(), moved], schema=test.schema),
                   out / f"questions/{task}/test.parquet")
    pq.write_table(train.from_pylist(train.to_pylist()[1:], schema=train.schema),
                   out / f"questions/{task}/train.parquet")
    problems = validate(out)
    assert f"unique: model {row['model_id']} is in splits ['test', 'train'] of different tasks" in problems
    assert not any("is used by" in p for p in problems)  # once per task still holds


def test_the_symmetry_filter_drops_the_most_symmetric_quarter_from_isometric_to_pose_only(reused):
    out, overrides = reused
    views = {}
    for row in pq.read_table(out / "views.parquet", columns=["model_id", "view", "png"]).to_pylist():
        views.setdefault(row["model_id"], {})[row["view"]] = row
    scores = {m: original_get_sym(*(_bgr(out / v[n]["png"]) for n in ("f", "r", "t"))) for m, v in views.items()}
    lowest = sorted(scores, key=scores.get)[:2]  # a quarter of the 8 usable models
    assert scores[lowest[1]] < sorted(scores.values())[2]  # no tie at the cut
    assert "holed_box" in lowest  # the cube drilled along Y: its front view is its own half-turn
    dropped = symmetric_models(load_config(None, overrides), out, views)
    assert dropped == dict.fromkeys(lowest, QuestionRejection.SYMMETRIC_THREE_VIEWS)
    summary = json.loads((out / "questions/summary.json").read_text())
    assert summary["rejected_models"]["isometric_to_pose"].get("symmetric_three_views", 0) >= 1
    i2p = {r["model_id"] for rows in _rows(out, "isometric_to_pose").values() for r in rows}
    assert not i2p & set(lowest) and len(i2p) == COUNTS["isometric_to_pose"]
    assert set(lowest) <= {r["model_id"] for rows in _rows(out, "isometric_view_generation").values() for r in rows}
    no_filter = load_config(None, [o for o in overrides if "symmetry_filter" not in o])
    assert symmetric_models(no_filter, out, views) == {}


def test_the_original_config_validates_and_sets_every_option():
    proc = spare_gen_cli("config", "-c", str(REPO / "configs" / "spare3d_csg_original.toml"))
    assert proc.returncode == 0, proc.stderr
    cfg = json.loads(proc.stdout)
    assert cfg["render"]["preset"] == "spare3d_csg" and cfg["render"]["line_width_rule"] == "model_units"
    q = cfg["questions"]
    assert (q["cutters"], q["cutter_box"], q["pose_choices"], q["model_reuse"], q["symmetry_filter"]) == (
        "spare3d", "brep", "spare3d", "per_task", "spare3d")
    assert set(q["counts"].values()) == {5000} and cfg["models"]["csg"]["count"] == 12000
    # the original's 2 / 1 px at spare_gen's median CSG model (largest B-rep box edge 0.98 units, viewBox 1.7 x that)
    px_per_unit = CANVAS / (FACTOR * 0.98)
    assert cfg["render"]["visible_width"] * px_per_unit == pytest.approx(2.0, abs=0.05)
    assert cfg["render"]["hidden_width"] * px_per_unit == pytest.approx(1.0, abs=0.03)


def test_the_options_stay_out_of_the_default_configs_dumps_so_earlier_datasets_keep_their_bytes():
    default = load_config(REPO / "configs" / "default.toml").model_dump(mode="json")
    assert "line_width_rule" not in default["render"]
    assert not {"cutter_box", "model_reuse", "symmetry_filter"} & set(default["questions"])
    assert load_config(None, ['questions.model_reuse="per_task"']).model_dump()["questions"]["model_reuse"] \
        == "per_task"
