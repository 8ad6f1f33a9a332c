"""Every number the drawing child computes from the curves, written down so that two versions of the code compare.

Usage:
    python benchmarks/drawings_identity.py write FILE [COUNT] [CAD ...]    (default 20 CSG models, seed 0)
    python benchmarks/drawings_identity.py compare FILE [COUNT] [CAD ...]

For each model (the model stage's first COUNT CSG models for seed 0, then each CAD file) and each of the 11 poses:
the exact view's visible and hidden polylines (``HlrModel.project``), the checked view (``project_checked`` with
the stray-line check: its lines and its problem) and the stray distance; per model the edge samples, the model
points, the outline's 3D polylines, its folds and the estimated scale. ``write`` pickles them; ``compare`` computes
them again and says which differ (bit for bit: ``np.array_equal`` on float64, NaN equal to NaN). Exit 1 on any
difference. Meant for a change that must not move a point (batched sampling, shared edge samples, vectorised folds).
"""

from __future__ import annotations

import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

from spare_gen import cad
from spare_gen.cad.hlr import HlrModel
from spare_gen.cad.hlr_shape import edge_samples
from spare_gen.config.schema import RenderConfig
from spare_gen.canvas.poses import fixed_poses
from spare_gen.stages.drawings.child import estimated_scale, project_checked
from spare_gen.stages.drawings.preset import drawing_rule
from spare_gen.stages.drawings.stray import Outline

from bench_drawings import csg_models


def _lines(lines) -> tuple:
    return None if lines is None else (lines.method.value, list(lines.visible), list(lines.hidden))


def model_record(path: Path, render: RenderConfig) -> dict:
    rule = drawing_rule(render)
    hlr = HlrModel(cad.read_shape(path), "exact", render.deflection, smooth_edges=rule.smooth_edges,
                   loose_edges=render.loose_edges)
    scale = estimated_scale(hlr, render.size, render.margin, rule)
    outline = Outline.of(hlr, scale)
    edges, folds = hlr.outline
    # the model points as a set (sorted, each once): the code before held each fold's ends, now each mesh node once
    record = {"edge_points": hlr.edge_points, "model_points": np.unique(hlr.model_points, axis=0),
              "outline_edges": list(edges),
              "fold_ends": folds.ends, "fold_normals": folds.normals, "complete": folds.complete,
              "scale": scale, "reference": outline.edges, "views": {},
              "sharp_edge_points": edge_samples(hlr.prepared.base, hlr.tolerance, smooth_edges=False)}
    for pose in fixed_poses():
        lines = hlr.project(pose.direction, pose.x_direction)
        checked, problem = project_checked(hlr, pose, scale, outline)
        record["views"][pose.name] = {"lines": _lines(lines), "checked": _lines(checked), "problem": problem,
                                      "stray_px": outline.stray_px(lines, pose)}
    return record


def _differences(a, b, where: str) -> list[str]:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        same = (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True))
        return [] if same else [where]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{where}/{k}")]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def main(argv: list[str]) -> int:
    mode, file = argv[0], Path(argv[1])
    count = int(argv[2]) if len(argv) > 2 else 20
    render = RenderConfig()
    with tempfile.TemporaryDirectory() as tmp:
        paths = csg_models(count, Path(tmp)) + [Path(p) for p in argv[3:]]
        records = {}
        for path in paths:
            records[path.name] = record = model_record(path, render)
            lines = sum(len(v["lines"][1]) + len(v["lines"][2]) for v in record["views"].values())
            print(f"{path.name}: {lines} polylines", flush=True)
    if mode == "write":
        file.write_bytes(pickle.dumps(records))
        return 0
    found = _differences(pickle.loads(file.read_bytes()), records, "")
    for line in found[:50]:
        print("differs:", line)
    n_lines = sum(len(v["lines"][1]) + len(v["lines"][2]) for r in records.values() for v in r["views"].values())
    print(f"{len(records)} models, {len(records) * 11} views, {n_lines} polylines: "
          + ("identical" if not found else f"{len(found)} differences"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
