"""`spare-gen learn-metric --features image`: DINOv2 features of canonical renderings, an MLP head, a
Bradley-Terry loss, and cross-validation with models and methods disjoint, on a small real pool."""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pytest

import spare_gen.ranking

from spare_gen import cad
from spare_gen.atomic import write_parquet
from spare_gen.cli import main
from spare_gen.config.schema import PoolConfig
from spare_gen.stages.models.csg import random_program
from spare_gen.stages.models.child import check_csg
from spare_gen.rng import derive_rng
from spare_gen.store.shards import rows_to_table
from spare_gen.wireframe import Wireframe
from spare_gen.stages.pool.child import brep_wireframe
from spare_gen.rating.pairs import make_pairs, pairs_to_arrow
from spare_gen.stages.pool.schema import CORRUPTIONS_SCHEMA, WIREFRAMES_SCHEMA
from spare_gen.stages.pool.corruptions import model_corruption_rows

torch = pytest.importorskip("torch", reason="the torch extra is not installed")  # the base install has no torch
from spare_gen.ranking import image_metric as im  # noqa: E402  (needs torch and transformers)

N_MODELS = 8
TRUTH = "corner_recall"  # the simulated raters' hidden preference


def csg_ground_truths(n: int) -> dict[str, object]:
    """``n`` random CSG models (as the models stage makes them) and their B-rep wireframes."""
    gts, i = {}, 0
    while len(gts) < n:
        program = random_program(2 + i % 3, derive_rng(0, "test-image-metric", i))
        i += 1
        try:
            shape = cad.build_csg(program)
            if check_csg(shape, program, 0.05)[0] is None:
                gts[f"csg_{i:06d}"] = brep_wireframe(shape).wireframe
        except (cad.CsgError, ValueError):  # a failed boolean, or no feature edges
            continue
    return gts


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """A pool folder as `spare-gen pool` writes its tables: every corruption of 8 CSG ground truths with the
    pool's metric columns (the pool stage's own per-model function), and its annotation pairs."""
    out = tmp_path_factory.mktemp("image_pool")
    defaults = PoolConfig()
    gt_rows, rows = [], []
    for model_id, gt in csg_ground_truths(N_MODELS).items():
        gt_row = {"model_id": model_id, "status": "ok", "error": "", **gt.to_row()}
        gt_rows.append(gt_row)
        rows += model_corruption_rows(gt_row, 0, corner_threshold=defaults.corner_threshold,
                                      edge_threshold=defaults.edge_threshold, image_size=64, out_dir=None)  # fmt: skip
    write_parquet(out / "wireframes.parquet", rows_to_table(gt_rows, WIREFRAMES_SCHEMA))
    write_parquet(out / "corruptions.parquet", rows_to_table(rows, CORRUPTIONS_SCHEMA))
    variants = pd.DataFrame(rows)
    variants = variants[variants["status"] == "ok"].assign(png=lambda v: v["corruption_id"] + ".png")
    write_parquet(out / "pairs.parquet", pairs_to_arrow(make_pairs(variants, 0)))
    return out


def test_image_metric_recovers_a_hidden_metric_from_pictures_with_a_random_backbone(pool, capsys):
    answers = pool / "answers.csv"
    assert main(["simulate-raters", str(pool), "--raters", "0.9,0.9,0.9,0.85,0.85", "--truth", TRUTH,
                 "--answers", str(answers)]) == 0  # fmt: skip
    capsys.readouterr()
    args = ["learn-metric", str(pool), str(answers), "--features", "image", "--backbone", im.RANDOM_SMALL,
            "--image-size", "112", "--epochs", "5"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "cross-validated accuracy" in printed and "model- and method-disjoint folds" in printed
    reports = pool / "reports"
    cv = pd.read_parquet(reports / "learned_image_cv.parquet").set_index("metric")
    # well above chance (0.5) on models and methods it never saw in training; every metric on the same judgements
    assert cv.loc[im.IMAGE_NAME, "accuracy"] > 0.7, cv["accuracy"].to_dict()
    assert {TRUTH, "edge_f1", "learned"} <= set(cv.index)
    assert cv.loc[TRUTH, "accuracy"] > 0.85  # the hidden preference itself: the raters' accuracy
    folds = pd.read_parquet(reports / "learned_image_folds.parquet")
    assert folds["fold"].nunique() == 10 and (folds["n_test"] > 0).all()
    scores = pd.read_parquet(reports / "learned_image_scores.parquet")
    corruptions = pd.read_parquet(pool / "corruptions.parquet", columns=["corruption_id", "status"])
    assert sorted(scores["corruption_id"]) == sorted(corruptions.loc[corruptions["status"] == "ok", "corruption_id"])
    assert np.isfinite(scores[im.IMAGE_NAME]).all()
    model = json.loads((reports / "learned_image_metric.json").read_text())
    assert model["backbone"] == im.RANDOM_SMALL and model["folds"] == 10 and model["view"] == im.CANONICAL_VIEW.name
    assert "models and methods (corruption kind/severity) disjoint" in (reports / "learned_image_metric.md").read_text()

    # the same inputs give the same bytes
    first = {p.name: p.read_bytes() for p in reports.glob("learned_image_*")}
    assert main(args) == 0
    assert {p.name: p.read_bytes() for p in reports.glob("learned_image_*")} == first

    # rank picks the image metric up as one more metric column (higher is better)
    assert main(["rank", str(pool), str(answers)]) == 0
    agreement = pd.read_parquet(pool / "reports" / "metric_agreement.parquet")
    assert im.IMAGE_NAME in set(agreement["metric"])


def test_a_saved_dinov2_small_folder_loads_offline_and_encodes_canonical_pictures(pool, tmp_path, capsys):
    """The real path: DINOv2-small's architecture (ViT-S/14) built by transformers, saved, loaded from the folder."""
    torch.manual_seed(0)
    config = im.Dinov2Config(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
                             patch_size=14, image_size=518)  # facebook/dinov2-small's shape, random weights
    im.Dinov2Model(config).save_pretrained(tmp_path / "dinov2-small")
    capsys.readouterr()
    model = im.load_backbone(str(tmp_path / "dinov2-small"))
    assert capsys.readouterr().err == ""  # no progress bars or info lines from transformers
    assert im.backbone_info(model) == {"hidden_size": 384, "layers": 12, "patch_size": 14}
    assert not any(p.requires_grad for p in model.parameters())
    variants = pd.read_parquet(pool / "corruptions.parquet")
    variants = variants[variants["status"] == "ok"].head(3)
    gts = pd.read_parquet(pool / "wireframes.parquet")
    gt_of = {r["model_id"]: Wireframe.from_row(r) for r in gts.to_dict("records")}
    candidates = [(r["model_id"], Wireframe.from_row(r)) for r in variants.to_dict("records")]
    picture = im.canonical_picture(gt_of[candidates[0][0]], candidates[0][1], 224)
    assert picture.shape == (224, 224, 3) and picture.dtype == np.uint8
    blue = (picture[..., 2] > 200) & (picture[..., 0] < 100)
    black = picture.max(axis=2) < 80
    assert blue.sum() > 100 and black.sum() > 0  # the candidate in blue over the ground truth in black
    with im.torch_determinism(1):
        features = im.picture_features(model, gt_of, candidates, 224, torch.device("cpu"))
    assert features.shape == (3, 768) and np.isfinite(features).all()
    assert np.abs(features[0] - features[1]).max() > 1e-3  # different candidates, different features


def test_a_backbone_that_is_not_there_is_one_line_and_exit_2(pool, tmp_path, capsys):
    answers = pool / "answers_bad.csv"
    assert main(["simulate-raters", str(pool), "--truth", TRUTH, "--answers", str(answers)]) == 0
    capsys.readouterr()
    for backbone, words in ((str(tmp_path / "no-such-folder"), "no such folder"),
                            ("spare-gen-tests/no-such-dinov2", "not in the Hugging Face cache")):  # fmt: skip
        assert main(["learn-metric", str(pool), str(answers), "--features", "image", "--backbone", backbone]) == 2
        err = capsys.readouterr().err
        assert words in err and backbone in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):  # argparse names the choices
        main(["learn-metric", str(pool), str(answers), "--features", "pixels"])
    assert "'pixels'" in capsys.readouterr().err


def test_without_torch_or_transformers_learn_metric_names_the_extra_and_exits_2(pool, monkeypatch, capsys):
    answers = pool / "answers_extra.csv"
    assert main(["simulate-raters", str(pool), "--truth", TRUTH, "--answers", str(answers)]) == 0
    capsys.readouterr()
    monkeypatch.delitem(sys.modules, "spare_gen.ranking.image_metric")
    monkeypatch.delattr(spare_gen.ranking, "image_metric")
    monkeypatch.setitem(sys.modules, "transformers", None)  # what Python does for a package that is not installed
    assert main(["learn-metric", str(pool), str(answers), "--features", "image", "--backbone", im.RANDOM_SMALL]) == 2
    err = capsys.readouterr().err
    assert 'pip install -e ".[torch]"' in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_folds_keep_models_and_methods_disjoint_and_test_every_within_group_judgement_once(pool):
    variants = pd.read_parquet(pool / "corruptions.parquet")
    variants = variants[variants["status"] == "ok"]
    pairs = pd.read_parquet(pool / "pairs.parquet")
    judgements = pairs[pairs["pair_type"] != "repeat"].assign(choice="left", rater_id="r")
    method_of = im.method_labels(variants)
    folds = im.disjoint_folds(judgements, method_of, 10, seed=0)
    assert len(folds) == 10
    left = method_of.reindex(judgements["left_id"]).to_numpy()
    right = method_of.reindex(judgements["right_id"]).to_numpy()
    models = judgements["model_id"].to_numpy()
    tested = np.zeros(len(judgements), int)
    for fold in folds:
        assert not set(models[fold.train]) & set(models[fold.test])
        train_methods = set(left[fold.train]) | set(right[fold.train])
        test_methods = set(left[fold.test]) | set(right[fold.test])
        assert not train_methods & test_methods and len(test_methods) >= 2
        tested += fold.test
    assert tested.max() == 1 and tested.sum() > 0.3 * len(judgements)
    assert [f.test.tolist() for f in im.disjoint_folds(judgements, method_of, 10, seed=0)] == [
        f.test.tolist() for f in folds]  # fmt: skip
