"""``spare-gen evaluate-poses``: score camera-pose predictions on the random views (TAS, RAS, PAS, ATE).

Predictions: CSV or Parquet with ``model_id, view, r00 .. r22, px, py, pz``: the world-to-camera
rotation (row-major; rows = camera right, up, towards the viewer, as views.parquet stores it) and the
camera centre in model coordinates. Ground truth is the ``rand_*`` views of ``views.parquet``.
Each model is its own scene (cameras around one object, model frame), so the alignment-based scores
are computed per model with ``spare_gen.metrics.pose.pose_report`` and averaged over models.
A model may be left out entirely; a model that is predicted must have all its random views.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from spare_gen.atomic import write_json
from spare_gen.data.evaluate import REPORTS_DIR, SHOWN_IDS
from spare_gen.store import shards
from spare_gen.data.tables import VIEWS_NAME
from spare_gen.canvas.poses import RANDOM_VIEW_PREFIX
from spare_gen.metrics.pose import RotationConvention, pose_report
from spare_gen.rng import derive_rng
from spare_gen.runner.isolation import Status

ROTATION_COLUMNS = tuple(f"r{i}{j}" for i in range(3) for j in range(3))
POSITION_COLUMNS = ("px", "py", "pz")
KEY_COLUMNS = ("model_id", "view")
MIN_VIEWS = 3  # the robust similarity alignment needs 3 cameras
ORTHONORMAL_TOLERANCE = 1e-3  # max |R R^T - I| entry for a predicted rotation
SCORES = ("tas", "ras", "pas", "ate", "ate_normalized")
REPORT_NAME = "evaluate_poses.json"


class PosePredictionError(ValueError):
    """The pose predictions cannot be scored (bad columns, unknown or missing views, not rotations)."""


def _listed(items: list[str]) -> str:
    more = f", ... ({len(items) - SHOWN_IDS} more)" if len(items) > SHOWN_IDS else ""
    return f"{len(items)} ({', '.join(items[:SHOWN_IDS])}{more})"


def ground_truth(out: Path) -> pd.DataFrame:
    """Random views of ``views.parquet``: model_id, view, rotation (3, 3) world-to-camera, position (3,)."""
    path = Path(out) / VIEWS_NAME
    if not shards.exists(path):
        raise FileNotFoundError(f"no {path} (run the drawing stage first)")
    names = shards.schema(path).names
    columns = [*KEY_COLUMNS, "camera_rotation", "camera_position", *(["status"] if "status" in names else [])]
    table = pq.read_table(path, columns=columns).to_pandas()
    keep = table["view"].str.startswith(RANDOM_VIEW_PREFIX) & table["camera_rotation"].notna()
    if "status" in table:
        keep &= table["status"] == Status.OK
    table = table[keep]
    if table.empty:
        raise PosePredictionError(f"{path} has no random views; regenerate with render.random_views >= {MIN_VIEWS}")
    return pd.DataFrame({
        "model_id": table["model_id"].to_numpy(), "view": table["view"].to_numpy(),
        "rotation": [np.asarray(np.stack(list(r)), dtype=np.float64).reshape(3, 3) for r in table["camera_rotation"]],
        "position": [np.asarray(p, dtype=np.float64).reshape(3) for p in table["camera_position"]],
    }).sort_values(list(KEY_COLUMNS), ignore_index=True)


def read_pose_predictions(path: Path) -> pd.DataFrame:
    """The predictions table (Parquet by suffix ``.parquet``/``.pq``, else CSV), columns checked."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no predictions file {path}")
    if path.suffix.lower() in (".parquet", ".pq"):
        frame = pd.read_parquet(path)
    else:
        frame = pd.read_csv(path, dtype={"model_id": str, "view": str})
    frame.columns = [str(c).strip() for c in frame.columns]
    needed = [*KEY_COLUMNS, *ROTATION_COLUMNS, *POSITION_COLUMNS]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise PosePredictionError(f"{path.name}: missing column(s) {', '.join(missing)}; expected "
                                  f"{', '.join(needed)}")
    frame = frame[needed].copy()
    frame["model_id"] = frame["model_id"].astype(str)
    frame["view"] = frame["view"].astype(str)
    values = frame[[*ROTATION_COLUMNS, *POSITION_COLUMNS]].apply(pd.to_numeric, errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=np.float64)).all(axis=1)
    if bad.any():
        keys = [f"{m}/{v}" for m, v in frame.loc[bad, list(KEY_COLUMNS)].itertuples(index=False)]
        raise PosePredictionError(f"{path.name}: non-numeric or non-finite values in rows {_listed(keys)}")
    frame[[*ROTATION_COLUMNS, *POSITION_COLUMNS]] = values
    return frame


def match(predictions: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """Predictions joined to the ground truth; raise on unknown, duplicated or missing views."""
    keys = [f"{m}/{v}" for m, v in predictions[list(KEY_COLUMNS)].itertuples(index=False)]
    dup = sorted(k for k, n in Counter(keys).items() if n > 1)
    if dup:
        raise PosePredictionError(f"duplicated views {_listed(dup)}")
    truth_keys = {f"{m}/{v}" for m, v in truth[list(KEY_COLUMNS)].itertuples(index=False)}
    unknown = [k for k in keys if k not in truth_keys]
    if unknown:
        raise PosePredictionError(f"unknown model/view pairs {_listed(unknown)} (only the {RANDOM_VIEW_PREFIX}* "
                                  f"views of {VIEWS_NAME} are scored)")
    predicted_models = set(predictions["model_id"])
    wanted = truth[truth["model_id"].isin(predicted_models)]
    given = set(keys)
    missing = sorted(f"{m}/{v}" for m, v in wanted[list(KEY_COLUMNS)].itertuples(index=False)
                     if f"{m}/{v}" not in given)
    if missing:
        raise PosePredictionError(f"predicted models lack views {_listed(missing)}; predict every random view "
                                  f"of a model, or leave the model out")
    return wanted.merge(predictions, on=list(KEY_COLUMNS), how="left", validate="one_to_one")


def predicted_rotations(frame: pd.DataFrame) -> np.ndarray:
    """(n, 3, 3) world-to-camera rotations; raise when one is not a proper rotation."""
    r = frame[list(ROTATION_COLUMNS)].to_numpy(dtype=np.float64).reshape(-1, 3, 3)
    off = np.abs(r @ np.transpose(r, (0, 2, 1)) - np.eye(3)).max(axis=(1, 2))
    bad = (off > ORTHONORMAL_TOLERANCE) | (np.linalg.det(r) <= 0)
    if bad.any():
        keys = [f"{m}/{v}" for m, v in frame.loc[bad, list(KEY_COLUMNS)].itertuples(index=False)]
        raise PosePredictionError(f"not rotation matrices (|R R^T - I| > {ORTHONORMAL_TOLERANCE} or det <= 0): "
                                  f"{_listed(keys)}; orthonormalise them first, e.g. with "
                                  f"scipy.spatial.transform.Rotation.from_matrix(R).as_matrix()")
    return r


def score_model(model_id: str, frame: pd.DataFrame, seed: int) -> dict:
    """Scores of one model's views (camera-to-world rotations and centres passed to pose_report)."""
    r_est = np.transpose(predicted_rotations(frame), (0, 2, 1))
    c_est = frame[list(POSITION_COLUMNS)].to_numpy(dtype=np.float64)
    r_gt = np.transpose(np.stack(frame["rotation"].to_list()), (0, 2, 1))
    c_gt = np.stack(frame["position"].to_list())
    rep = pose_report(r_est, c_est, r_gt, c_gt, convention=RotationConvention.CAMERA_TO_WORLD,
                      rng=derive_rng(seed, "evaluate_poses", model_id))
    spread = float(np.sqrt(np.mean(np.sum((c_gt - c_gt.mean(axis=0)) ** 2, axis=1))))
    return {"n_views": int(len(frame)), "tas": rep["tas"], "ras": rep["ras"], "pas": rep["pas"], "ate": rep["ate"],
            "ate_normalized": rep["ate"] / spread if spread > 0 else float("nan"), "d": rep["d"]}


def evaluate_poses(out: Path, predictions_path: Path, *, seed: int = 0) -> dict:
    """Per-model and mean TAS, RAS, PAS, ATE (model units) and ATE / RMS spread of the true centres."""
    truth = ground_truth(Path(out))
    joined = match(read_pose_predictions(predictions_path), truth)
    per_model, skipped = {}, []
    for model_id, frame in joined.groupby("model_id", sort=True):
        if len(frame) < MIN_VIEWS:
            skipped.append(model_id)
            continue
        per_model[model_id] = score_model(model_id, frame.reset_index(drop=True), seed)
    if not per_model:
        raise PosePredictionError(f"no model with at least {MIN_VIEWS} predicted random views to score")
    mean = {k: float(np.nanmean([m[k] for m in per_model.values()])) for k in SCORES}
    return {"predictions": str(predictions_path), "seed": seed, "n_models": len(per_model),
            "n_models_in_dataset": int(truth["model_id"].nunique()), "n_views": int(len(joined)),
            "skipped_models": skipped, "mean": mean, "models": per_model}


def format_report(report: dict, max_rows: int = 20) -> str:
    head = f"{'model':<24}{'views':>6}" + "".join(f"{k.upper() if k != 'ate_normalized' else 'ATE/spread':>12}"
                                                  for k in SCORES)
    lines = [f"pose predictions: {report['n_models']} of {report['n_models_in_dataset']} models, "
             f"{report['n_views']} views", head]
    for model_id, m in list(report["models"].items())[:max_rows]:
        lines.append(f"{model_id:<24}{m['n_views']:>6}" + "".join(f"{m[k]:>12.4f}" for k in SCORES))
    if len(report["models"]) > max_rows:
        lines.append(f"... ({len(report['models']) - max_rows} more models in the JSON report)")
    lines.append(f"{'mean over models':<24}{'':>6}" + "".join(f"{report['mean'][k]:>12.4f}" for k in SCORES))
    return "\n".join(lines)


def main(out: Path, predictions_path: Path, seed: int = 0) -> int:
    """CLI entry: 0 when scored, 2 on a bad dataset or predictions file."""
    try:
        report = evaluate_poses(Path(out), Path(predictions_path), seed=seed)
    except (ValueError, FileNotFoundError) as exc:
        print(f"spare-gen evaluate-poses: error: {exc}", file=sys.stderr)
        return 2
    print(format_report(report))
    path = write_json(Path(out) / REPORTS_DIR / REPORT_NAME, report)
    print(f"report: {path}")
    return 0
