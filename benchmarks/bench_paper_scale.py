"""Paper-scale SPARE3D-CSG (configs/spare3d_csg.toml) at a fraction: per-stage time, throughput, slowest units,
the projected full-scale time, and the drawing overhead against the bare OCCT floor, all measured in one run;
then the OCCT floor of the models, drawings and cut-set stages at full scale (``occt_floor.py``: the bare
OpenCASCADE calls the output needs, timed again on a sample of this run's own models and cut sets).

Usage: python benchmarks/bench_paper_scale.py [FRACTION] [--workers N]   (default 0.1 = 1,200 models)

Every stage of ``spare-gen run`` runs on an embedded Dask cluster into a fresh temporary folder (pool off, as in
the paper config); projections scale each stage's wall time by 1 / FRACTION (all stages are linear in models and
questions). Machines here are shared and noisy: check ``uptime`` first and compare numbers within one run only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_drawings import csg_models  # noqa: E402
from occt_floor import cut_set_floor, model_and_view_floor  # noqa: E402

from spare_gen import cad  # noqa: E402
from spare_gen.cad.hlr import exact_hlr_floor  # noqa: E402
from spare_gen.config import load_config  # noqa: E402
from spare_gen.config.schema import TaskName  # noqa: E402
from spare_gen.drawings.poses import fixed_poses  # noqa: E402
from spare_gen.runner.cluster import open_client  # noqa: E402
from spare_gen.runner.stage import read_timings  # noqa: E402

SLOWEST = 5
FLOOR_SAMPLE = 30  # models and cut sets of the run whose bare OCCT calls are timed again (occt_floor.py)


def _slowest(out: Path, stage: str) -> list[tuple[str, float]]:
    rows = read_timings(out, stage)
    times = [(uid, float(t.get("task_seconds", 0.0))) for uid, t in rows.items()]
    return sorted(times, key=lambda x: -x[1])[:SLOWEST]


def _floor_ratio(n: int = 12) -> tuple[float, float]:
    """(OCCT floor ms/view, spare_gen drawing ms/view) on the model stage's first ``n`` CSG models."""
    from bench_drawings import per_view_work
    from spare_gen.config.schema import RenderConfig

    render = RenderConfig()
    views = [(p.direction, p.x_direction) for p in fixed_poses()]
    with tempfile.TemporaryDirectory() as tmp:
        paths = csg_models(n, Path(tmp))
        floor = sum(min(exact_hlr_floor(cad.read_shape(p), views) for _ in range(3)) for p in paths)
        work = sum(min(per_view_work(p, render, Path(tmp) / f"w{k}")[1] for k in range(3)) for p in paths)
    return 1e3 * floor / (n * len(views)), 1e3 * work / (n * len(views))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fraction", nargs="?", type=float, default=0.1)
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    base = load_config(REPO / "configs" / "spare3d_csg.toml")
    f = args.fraction
    counts = {t.value: max(1, round(n * f)) for t, n in base.questions.counts.items()}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        overrides = [f'out="{out}"', "runner.progress=false", "runner.dashboard=false",
                     f"runner.workers={args.workers}", f"models.csg.count={max(3, round(base.models.csg.count * f))}",
                     *[f"questions.counts.{t}={n}" for t, n in counts.items()]]
        config = load_config(REPO / "configs" / "spare3d_csg.toml", overrides)
        from spare_gen.drawings.driver import run_drawings
        from spare_gen.models.driver import run_models
        from spare_gen.questions.stage.driver import run_questions

        wall: dict[str, float] = {}
        with open_client(config.runner.scheduler, config.runner.workers, dashboard=False, quiet=True) as client:
            n_workers = len(client.scheduler_info()["workers"])
            for name, stage in (("models", run_models), ("drawings", run_drawings), ("questions", run_questions)):
                t0 = time.perf_counter()
                stage(client, config, out)
                wall[name] = time.perf_counter() - t0
            from spare_gen.jobs.regenerate import _audit  # spare-gen run audits every dataset it writes, on its workers

            t0 = time.perf_counter()
            audit = _audit(out, config.seed, client)
            wall["audit"] = time.perf_counter() - t0
        q_timings = json.loads((out / "questions" / "timings.json").read_text())["tasks"]
        cut_units = read_timings(out, f"questions_{TaskName.THREE_VIEW_TO_ISOMETRIC.value}")
        cut_cpu = sum(float((u.get("timings") or {}).get("cpu", 0.0)) for u in cut_units.values())
        cut_busy = sum(float(u.get("task_seconds", 0.0)) for u in cut_units.values())
        slow = {s: _slowest(out, s) for s in ("models", "drawings", *[f"questions_{t}" for t in counts])}
        n_models = config.models.csg.count
        model_floor, view_floor = model_and_view_floor(out, FLOOR_SAMPLE)
        cut_floor = cut_set_floor(out, FLOOR_SAMPLE)
    floor_ms, work_ms = _floor_ratio()
    total = sum(wall.values())
    print(f"spare3d_csg at {f:g} scale: {n_models} models, questions {counts}, {n_workers} workers")
    print(f"  models    {wall['models']:8.1f} s  {n_models / wall['models']:7.1f} models/s   "
          f"projected {wall['models'] / f / 60:6.1f} min")
    print(f"  drawings  {wall['drawings']:8.1f} s  {11 * n_models / wall['drawings']:7.1f} views/s    "
          f"projected {wall['drawings'] / f / 60:6.1f} min")
    for task, t in q_timings.items():
        print(f"  {task:28s} {t['questions']:5d} q in {t['wall_seconds']:7.1f} s  "
              f"({t['questions_per_second'] or 0:6.2f} q/s)   projected {t['wall_seconds'] / f / 60:6.1f} min")
    n_q = q_timings.get(TaskName.THREE_VIEW_TO_ISOMETRIC.value, {}).get("questions") or 0
    if n_q:
        t = q_timings[TaskName.THREE_VIEW_TO_ISOMETRIC.value]
        print(f"    three_view_to_isometric per question: {cut_cpu / n_q:.3f} CPU s in cut sets (forked attempts "
              f"included), {cut_busy / n_q:.3f} s of worker time, {t['wall_seconds'] * n_workers / n_q:.3f} s of "
              f"stage wall x workers; {len(cut_units)} cut sets for {n_q} questions")
    print(f"  questions stage total {wall['questions']:8.1f} s   projected {wall['questions'] / f / 60:6.1f} min")
    print(f"  audit     {wall['audit']:8.1f} s   projected {wall['audit'] / f / 60:6.1f} min   ({audit.splitlines()[0]})")
    print(f"  whole run {total:8.1f} s   projected full scale {total / f / 60:6.1f} min   (target <= 30 min)")
    print(f"    30 min at full scale would take about {math.ceil(n_workers * total / f / 60 / 30)} workers if every "
          f"stage scaled linearly (spare-gen run --scheduler tcp://...; draw_model: 2 workers 1.89x one)")
    print(f"  drawing overhead: OCCT floor {floor_ms:.2f} ms/view, spare_gen {work_ms:.2f} ms/view, "
          f"ratio {work_ms / floor_ms:.2f} (target <= 1.3)")
    full_models, full_cut_sets = base.models.csg.count, base.questions.counts[TaskName.THREE_VIEW_TO_ISOMETRIC]
    floors = {"models": model_floor * full_models, "drawings": view_floor * 11 * full_models,
              "three_view_to_isometric": cut_floor * full_cut_sets}
    print(f"  OCCT floor (CPU, {FLOOR_SAMPLE} of this run's models / cut sets): build {model_floor * 1e3:.1f} ms/model, "
          f"exact HLR {view_floor * 1e3:.2f} ms/view, cut set {cut_floor:.3f} s/question (4 booleans + 7 views)")
    measured = {"models": wall["models"], "drawings": wall["drawings"],
                "three_view_to_isometric": q_timings.get(TaskName.THREE_VIEW_TO_ISOMETRIC.value, {}).get(
                    "wall_seconds", 0.0)}
    for stage, cpu in floors.items():
        floor_min = cpu / n_workers / 60
        print(f"    {stage:24s} floor at full scale {floor_min:6.1f} min on {n_workers} workers; "
              f"measured {measured[stage] / f / 60:6.1f} min ({measured[stage] / f / 60 / floor_min:.2f}x floor)")
    print(f"    floor of these three stages at full scale: {sum(floors.values()) / n_workers / 60:.1f} min "
          f"(the 30 min target is below it when this exceeds 30)")
    for stage, rows in slow.items():
        if rows:
            print(f"  slowest {stage}: " + ", ".join(f"{uid} {s:.1f} s" for uid, s in rows))


if __name__ == "__main__":
    main()
