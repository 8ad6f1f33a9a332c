"""Scoring: multiple-choice predictions (accuracy, Wilson CI, errors, lenient mode) and camera-pose predictions."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from scipy.spatial.transform import Rotation
from scipy.stats import binomtest  # the reference for wilson(): spare_gen itself does not import scipy.stats
from synthetic_dataset import make_dataset

from spare_gen.cli import main as cli_main
from spare_gen.data import evaluate as ev
from spare_gen.data import evaluate_poses as evp
from spare_gen.data.stats import wilson
from spare_gen.rng import derive_rng

TASK = "three_view_to_isometric"
N_CAMERA_MODELS, N_RANDOM_VIEWS = 3, 6


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("eval") / "out", split_sizes={"train": 8, "val": 4, "test": 24},
                        random_views=N_RANDOM_VIEWS, n_models_with_views=N_CAMERA_MODELS)


def truth(dataset, task=TASK, split="test") -> list[dict]:
    return pq.read_table(dataset / "questions" / task / f"{split}.parquet",
                         columns=["question_id", "answer", "n_primitives"]).to_pylist()


def write_csv(path, rows, header=("question_id", "answer")):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_wilson_matches_the_closed_form():
    z = 1.959963984540054
    for k, n in ((8, 10), (0, 7), (24, 24), (6, 24)):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        acc = wilson(k, n)
        assert acc.low == pytest.approx(max(centre - half, 0.0), abs=1e-12)
        assert acc.high == pytest.approx(min(centre + half, 1.0), abs=1e-12)
    with pytest.raises(ValueError, match="outside"):
        wilson(5, 4)


def test_wilson_is_scipys_interval_to_the_last_bit():
    for n in range(1, 120):
        for k in range(n + 1):
            for confidence in (0.95, 1 - 0.05 / 21, 0.99):
                ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
                acc = wilson(k, n, confidence)
                assert (acc.low, acc.high) == (float(ci.low), float(ci.high)), (k, n, confidence)


def test_perfect_predictions_score_100_percent_and_write_the_report(dataset, tmp_path, capsys):
    rows = truth(dataset)
    path = write_csv(tmp_path / "perfect.csv", [(r["question_id"], r["answer"]) for r in rows])
    assert ev.main(dataset, TASK, "test", path) == 0
    printed = capsys.readouterr().out
    assert "100.0%" in printed and "80.5%" in printed and "94.0%" in printed  # the paper's human results
    report = json.loads((dataset / "reports" / f"evaluate_{TASK}_test.json").read_text())
    assert report["overall"]["correct"] == report["overall"]["total"] == len(rows) == 24
    assert report["chance"] == 0.25
    assert report["human"]["untrained_average"] == 0.805 and report["human"]["trained_max"] == 0.94
    # the synthetic split has 8 questions of each of 2, 3, 4 primitives
    assert {k: v["total"] for k, v in report["by_primitives"].items()} == {
        "2 primitives": 8, "3 primitives": 8, "4 primitives": 8}
    assert report["overall"]["ci"] == pytest.approx([wilson(24, 24).low, 1.0])


@pytest.mark.parametrize("constant", [0, 1, 2, 3])
def test_a_constant_answer_scores_the_share_of_that_answer(dataset, tmp_path, constant):
    rows = truth(dataset, "pose_to_isometric")
    path = write_csv(tmp_path / "const.csv", [(r["question_id"], constant) for r in rows])
    report = ev.evaluate(dataset, "pose_to_isometric", "test", path)
    share = sum(r["answer"] == constant for r in rows)
    assert report["overall"]["correct"] == share == 6  # 24 balanced answers: 6 of each
    for name, acc in report["by_primitives"].items():
        n_prim = int(name.split()[0])
        assert acc["correct"] == sum(r["answer"] == constant for r in rows if r["n_primitives"] == n_prim)
    assert report["human"]["untrained_average"] == 0.586


def bad_file(dataset, tmp_path):
    rows = truth(dataset)
    lines = [(r["question_id"], r["answer"]) for r in rows[3:]]  # 3 missing
    lines[0] = (lines[0][0], "7")  # out of range
    lines[1] = (lines[1][0], "1.5")  # not an integer
    lines += [("no-such-question", 0), ("another-one", 1)]
    return write_csv(tmp_path / "bad.csv", lines), rows


def test_malformed_predictions_give_one_line_error_and_exit_2(dataset, tmp_path, capsys):
    path, rows = bad_file(dataset, tmp_path)
    with pytest.raises(ev.PredictionError) as err:
        ev.evaluate(dataset, TASK, "test", path)
    msg = str(err.value)
    assert "\n" not in msg
    assert "2 unknown question ids (no-such-question, another-one)" in msg
    assert f"3 questions without a prediction ({rows[0]['question_id']}, {rows[1]['question_id']}" in msg
    assert f"2 invalid answers ({rows[3]['question_id']}: '7', {rows[4]['question_id']}: '1.5')" in msg
    assert ev.main(dataset, TASK, "test", path) == 2
    err_text = capsys.readouterr().err.strip()
    assert err_text.count("\n") == 0 and err_text.startswith("spare-gen evaluate: error:")
    # routed through the CLI the same way
    assert cli_main(["evaluate", str(dataset), str(path), "--task", TASK, "--split", "test"]) == 2


def test_lenient_counts_problems_as_wrong_with_a_warning(dataset, tmp_path, capsys):
    path, rows = bad_file(dataset, tmp_path)
    assert ev.main(dataset, TASK, "test", path, lenient=True) == 0
    assert "warning" in capsys.readouterr().err
    report = json.loads((dataset / "reports" / f"evaluate_{TASK}_test.json").read_text())
    assert report["overall"]["correct"] == len(rows) - 3 - 2  # every valid prediction is right
    assert report["overall"]["total"] == len(rows)
    assert report["problems"]["unknown"]["count"] == 2 and report["problems"]["missing"]["count"] == 3


def test_duplicates_and_headers_are_checked(dataset, tmp_path):
    rows = truth(dataset)
    lines = [(r["question_id"], r["answer"]) for r in rows] + [(rows[0]["question_id"], rows[0]["answer"])]
    with pytest.raises(ev.PredictionError, match=f"1 duplicated question ids \\({rows[0]['question_id']}\\)"):
        ev.evaluate(dataset, TASK, "test", write_csv(tmp_path / "dup.csv", lines))
    no_header = write_csv(tmp_path / "nohead.csv", [(r["question_id"], r["answer"]) for r in rows],
                          header=("id", "choice"))
    with pytest.raises(ev.PredictionError, match="lacks column\\(s\\) question_id, answer"):
        ev.evaluate(dataset, TASK, "test", no_header)


def test_generation_tasks_and_bad_names_are_refused(dataset, tmp_path):
    path = write_csv(tmp_path / "p.csv", [])
    with pytest.raises(ValueError, match="multiple-choice tasks three_view_to_isometric, isometric_to_pose, "
                                         "pose_to_isometric; 'isometric_view_generation' is a generation task"):
        ev.evaluate(dataset, "isometric_view_generation", "test", path)
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        ev.evaluate(dataset, "nope", "test", path)
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        ev.evaluate(dataset, TASK, "dev", path)


# ---- camera poses -------------------------------------------------------------------------------------------


def true_cameras(dataset) -> pd.DataFrame:
    v = pq.read_table(dataset / "views.parquet").to_pandas()
    v = v[v["view"].str.startswith("rand_")].reset_index(drop=True)
    return v


def pose_rows(cameras: pd.DataFrame, scale=1.0, rotation=np.eye(3), shift=np.zeros(3)) -> pd.DataFrame:
    """Predictions that are the truth moved by a world similarity x -> scale * rotation x + shift."""
    rows = []
    for _, r in cameras.iterrows():
        w2c = np.stack(list(r["camera_rotation"])) @ rotation.T  # world-to-camera of the moved world
        pos = scale * rotation @ np.asarray(r["camera_position"]) + shift
        rows.append({"model_id": r["model_id"], "view": r["view"],
                     **{f"r{i}{j}": w2c[i, j] for i in range(3) for j in range(3)},
                     "px": pos[0], "py": pos[1], "pz": pos[2]})
    return pd.DataFrame(rows)


def test_poses_equal_up_to_a_similarity_score_perfectly(dataset, tmp_path):
    cams = true_cameras(dataset)
    q = Rotation.from_euler("xyz", [0.3, -1.1, 2.0]).as_matrix()
    preds = pose_rows(cams, scale=3.5, rotation=q, shift=np.array([1.0, -2.0, 0.5]))
    path = tmp_path / "poses.parquet"
    preds.to_parquet(path)
    report = evp.evaluate_poses(dataset, path)
    assert report["n_models"] == N_CAMERA_MODELS and report["n_views"] == N_CAMERA_MODELS * N_RANDOM_VIEWS
    for key in ("tas", "ras", "pas"):
        assert report["mean"][key] == pytest.approx(1.0)
    assert report["mean"]["ate"] == pytest.approx(0.0, abs=1e-9)


def test_a_rotated_camera_lowers_ras_by_its_share(dataset, tmp_path):
    cams = true_cameras(dataset)
    preds = pose_rows(cams)
    first = preds.index[preds["model_id"] == preds["model_id"].iloc[0]][0]
    turn = Rotation.from_euler("z", 30, degrees=True).as_matrix()  # 30 degrees: above every RAS threshold
    w2c = preds.loc[first, [f"r{i}{j}" for i in range(3) for j in range(3)]].to_numpy(float).reshape(3, 3)
    preds.loc[first, [f"r{i}{j}" for i in range(3) for j in range(3)]] = (turn @ w2c).ravel()
    path = tmp_path / "poses.csv"
    preds.to_csv(path, index=False)
    report = evp.evaluate_poses(dataset, path)
    model = report["models"][preds["model_id"].iloc[0]]
    # the robust rotation average ignores the outlier, so 5 of 6 cameras are exact at every threshold
    assert model["ras"] == pytest.approx(5 / 6)
    assert model["tas"] == pytest.approx(1.0)


def test_pose_prediction_errors(dataset, tmp_path, capsys):
    cams = true_cameras(dataset)
    preds = pose_rows(cams)
    cases = {
        "unknown": pd.concat([preds, preds.iloc[[0]].assign(view="rand_999")]),
        "missing": preds.iloc[1:],
        "duplicated": pd.concat([preds, preds.iloc[[0]]]),
        "not rotation": preds.assign(r00=preds["r00"] * 2.0),
        "missing column": preds.drop(columns=["pz"]),
        "non-numeric": preds.astype({"px": object}).assign(px="x"),
    }
    messages = {
        "unknown": f"unknown model/view pairs 1 ({cams['model_id'][0]}/rand_999)",
        "missing": f"predicted models lack views 1 ({cams['model_id'][0]}/{cams['view'][0]})",
        "duplicated": f"duplicated views 1 ({cams['model_id'][0]}/{cams['view'][0]})",
        "not rotation": "not rotation matrices",
        "missing column": "missing column(s) pz",
        "non-numeric": "non-numeric or non-finite values",
    }
    for name, frame in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.csv"
        frame.to_csv(path, index=False)
        with pytest.raises(evp.PosePredictionError) as err:
            evp.evaluate_poses(dataset, path)
        assert messages[name] in str(err.value), name
    assert evp.main(dataset, tmp_path / "unknown.csv") == 2
    assert capsys.readouterr().err.startswith("spare-gen evaluate-poses: error: unknown model/view pairs")


def test_models_left_out_are_not_scored(dataset, tmp_path):
    cams = true_cameras(dataset)
    preds = pose_rows(cams)
    keep = preds[preds["model_id"] == preds["model_id"].iloc[0]]
    path = tmp_path / "one.csv"
    keep.to_csv(path, index=False)
    assert cli_main(["evaluate-poses", str(dataset), str(path)]) == 0
    report = json.loads((dataset / "reports" / "evaluate_poses.json").read_text())
    assert report["n_models"] == 1 and report["n_models_in_dataset"] == N_CAMERA_MODELS
    assert report["mean"]["pas"] == pytest.approx(1.0)


def test_noise_in_positions_gives_ate_in_model_units(dataset, tmp_path):
    cams = true_cameras(dataset)
    preds = pose_rows(cams)
    rng = derive_rng(0, "test", "ate")
    # displace every camera centre by exactly 0.01 in a random direction: ATE after alignment <= 0.01
    d = rng.standard_normal((len(preds), 3))
    d = 0.01 * d / np.linalg.norm(d, axis=1, keepdims=True)
    preds[["px", "py", "pz"]] += d
    path = tmp_path / "noisy.csv"
    preds.to_csv(path, index=False)
    report = evp.evaluate_poses(dataset, path)
    for m in report["models"].values():
        assert 0.0 < m["ate"] <= 0.01 + 1e-12
        assert m["ras"] == pytest.approx(1.0)
