"""The OCCT floor of a finished run: CPU seconds of the bare OpenCASCADE calls its output cannot do without.

Measured on a sample of the run's own accepted models and cut sets (CPU time of this process, so other load on
the machine matters less): building each model's CSG program, exact hidden-line removal of its 11 fixed views,
and per three-view question the four accepted cut booleans plus the exact HLR of the seven drawings it stores
(cut 0's front, right, top and every cut's candidate). Shape preparation for HLR (fusing, seam splitting) is
counted: the same drawings need it. These are the accepted units' calls only; the same-output floor of a stage also
counts its rejected attempts, which ``bench_paper_scale.py`` takes from the run's own step timings.

HLR is timed two ways: bare (``run_exact``: OCCT's Update, Hide and result extraction) and with its curve extraction
(``HlrModel.project``: the result edges' curves sampled into the polylines the files store), which is what the
cut-set child's ``hlr`` step timing counts. The difference is spare_gen's sampler: OCCT curve evaluations called one
point at a time from Python, with the numpy refinement around them.
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

from spare_gen import cad
from spare_gen.store import shards
from spare_gen.cad.cut import bare_cut
from spare_gen.cad.hlr import HlrModel, run_exact
from spare_gen.cad.hlr_shape import prepare_shape
from spare_gen.canvas.poses import fixed_poses, pose
from spare_gen.stages.models.schema import MODELS_FILE
from spare_gen.stages.questions.tasks.three_view_to_isometric.job import SOURCE_VIEWS, TARGET

CUT_SET_DIR = ".units/questions_three_view_to_isometric"


def _hlr_cpu(shape, views) -> tuple[float, float]:
    """CPU s of the views' exact HLR, shape preparation included: (bare, with the curve extraction)."""
    t = time.process_time()
    prepared = prepare_shape(shape).exact
    for direction, x_direction in views:
        run_exact(prepared, direction, x_direction)
    bare = time.process_time() - t
    t = time.process_time()
    model = HlrModel(shape)
    for direction, x_direction in views:
        model.project(direction, x_direction)
    return bare, time.process_time() - t


def model_and_view_floor(out: Path, n: int) -> tuple[float, float, float]:
    """(CPU s per model to build its CSG solid, CPU s per view of exact HLR with its shape preparation, the same with
    the curve extraction) over the first ``n`` ok models."""
    rows = [r for r in shards.read(out / MODELS_FILE, columns=["status", "csg", "brep_path"]).to_pylist()
            if r["status"] == "ok" and r["csg"]][:n]
    views = [(p.direction, p.x_direction) for p in fixed_poses()]
    build = hlr = curves = 0.0
    for r in rows:
        t = time.process_time()
        cad.build_csg(json.loads(r["csg"]))
        build += time.process_time() - t
        bare, sampled = _hlr_cpu(cad.read_shape(out / r["brep_path"]), views)
        hlr, curves = hlr + bare, curves + sampled
    n_views = max(1, len(rows) * len(views))
    return build / max(1, len(rows)), hlr / n_views, curves / n_views


def cut_set_floor(out: Path, n: int) -> tuple[float, float, float]:
    """CPU s per accepted three-view question: (its four cut booleans and the bare exact HLR of its seven stored
    views, the HLR part alone, the HLR part with its curve extraction)."""
    brep = {r["model_id"]: r["brep_path"] for r in shards.read(out / MODELS_FILE, columns=["model_id", "brep_path"])
            .to_pylist()}
    sets = []
    for path in sorted((out / CUT_SET_DIR).glob("*.json.gz")):
        result = json.loads(gzip.decompress(path.read_bytes()))
        if result.get("accepted"):
            sets.append(result)
        if len(sets) == n:
            break
    booleans = hlr = curves = 0.0
    for s in sets:
        shape = cad.read_shape(out / brep[s["model_id"]])
        for k, c in enumerate(s["cuts"]):
            t = time.process_time()
            cut = bare_cut(shape, c["cutter"])
            booleans += time.process_time() - t
            names = (*SOURCE_VIEWS, TARGET) if k == 0 else (TARGET,)
            bare, sampled = _hlr_cpu(cut, [(pose(v).direction, pose(v).x_direction) for v in names])
            hlr, curves = hlr + bare, curves + sampled
    n_sets = max(1, len(sets))
    return (booleans + hlr) / n_sets, hlr / n_sets, curves / n_sets
