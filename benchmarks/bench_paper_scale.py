"""Paper-scale SPARE3D-CSG (configs/spare3d_csg.toml) at a fraction: per-stage time, throughput, slowest units,
the projected full-scale time, and the drawing overhead against the bare OCCT floor, all measured in one run;
then the OCCT floor of the models, drawings and cut-set stages at full scale (``occt_floor.py``: the bare
OpenCASCADE calls the output needs, timed again on a sample of this run's own models and cut sets).

Usage: python benchmarks/bench_paper_scale.py [FRACTION] [--workers N]   (default 0.1 = 1,200 models)

Every stage of ``spare-gen run`` runs on an embedded Dask cluster into a fresh temporary folder (pool off, as in
the paper config). Every stage's CPU is measured by process kind (``cpu_account.py``: client with scheduler,
nannies, Dask workers, OCCT children) and projected from CPU to full scale on 2, 8, 16 and 64 workers (serial
client CPU + the rest / N, all stages linear in models and questions), beside the wall-clock projection, which
on a shared machine measures the other jobs too. Then each stage's CPU per unit against its same-output floor.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_drawings import csg_models  # noqa: E402
from occt_floor import cut_set_floor, model_and_view_floor  # noqa: E402

from spare_gen import cad  # noqa: E402
from spare_gen.cad.hlr import exact_hlr_floor  # noqa: E402
from spare_gen.config import load_config  # noqa: E402
from spare_gen.config.schema import TaskName  # noqa: E402
from spare_gen.canvas.poses import fixed_poses  # noqa: E402
from spare_gen.runner.cluster import open_client  # noqa: E402
from cpu_account import CpuMeter  # noqa: E402
from spare_gen.runner.isolation import read_message  # noqa: E402
from spare_gen.runner.stage import read_timings  # noqa: E402

SLOWEST = 5
FLOOR_SAMPLE = 30  # models and cut sets of the run whose bare OCCT calls are timed again (occt_floor.py)


def _slowest(out: Path, stage: str) -> list[tuple[str, float]]:
    rows = read_timings(out, stage)
    times = [(uid, float(t.get("task_wall_s", 0.0))) for uid, t in rows.items()]
    return sorted(times, key=lambda x: -x[1])[:SLOWEST]


def child_start_cpu(repeats: int = 3) -> float:
    """CPU seconds an OCCT child spends starting (Python, spare_gen.cad and OCP imported) before it says it is ready:
    each Dask worker's first child pays it once, in the first stage that uses OCCT (best of ``repeats``)."""
    best = float("inf")
    for _ in range(repeats):
        proc = subprocess.Popen([sys.executable, "-m", "spare_gen.runner.child"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, cwd=REPO)
        read_message(proc.stdout.fileno())  # "ready"
        times = psutil.Process(proc.pid).cpu_times()
        best = min(best, times.user + times.system)
        proc.stdin.close()
        proc.wait(timeout=60)
    return best


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


def _cut_set_occt_cpu(unit: dict) -> float:
    """CPU s of a cut set's OCCT work, every attempt included, as its child timed it: booleans with their checks
    and volumes (``boolean``), HLR models and projections of every view drawn (``hlr``), the accepted cuts' STEP
    files (``step``)."""
    steps = unit.get("steps_cpu_s") or {}
    return sum(float(steps.get(k, 0.0)) for k in ("boolean", "hlr", "step"))


def _model_phase_cpu(out: Path) -> float:
    """CPU s per model of the OCCT work the model stage's child records: the accepted model's booleans and checks,
    the rejected attempts', the STEP and BREP writes and hashing (``spare_gen.stages.models.child`` timing)."""
    rows = read_timings(out, "models")
    return sum(sum((t.get("steps_cpu_s") or {}).values()) for t in rows.values()) / max(1, len(rows))


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
        from spare_gen.stages.drawings.driver import run_drawings
        from spare_gen.stages.models.driver import run_models
        from spare_gen.stages.questions.driver import run_questions

        n_models = config.models.csg.count
        n_questions = sum(counts.values())
        with open_client(config.runner.scheduler, config.runner.workers, dashboard=False, quiet=True) as client:
            n_workers = len(client.scheduler_info()["workers"])
            meter = CpuMeter(client)
            full_models, full_questions = base.models.csg.count, sum(base.questions.counts.values())
            meter.measure("models", n_models, "model", lambda: run_models(client, config, out), full_models)
            meter.measure("drawings", 11 * n_models, "view", lambda: run_drawings(client, config, out),
                          11 * full_models)
            meter.measure("questions", n_questions, "question", lambda: run_questions(client, config, out),
                          full_questions)
            from spare_gen.jobs.stages import audit_line  # spare-gen run audits every dataset it writes, on its workers

            audit = meter.measure("audit", n_questions, "question", lambda: audit_line(out, config.seed, client),
                                  full_questions)
        wall = {s.name: s.wall for s in meter.stages}
        q_timings = json.loads((out / "questions" / "timings.json").read_text())["tasks"]
        cut_units = read_timings(out, f"questions_{TaskName.THREE_VIEW_TO_ISOMETRIC.value}")
        cut_cpu = sum(float((u.get("steps_cpu_s") or {}).get("cpu", 0.0)) for u in cut_units.values())
        cut_occt = sum(_cut_set_occt_cpu(u) for u in cut_units.values())
        slow = {s: _slowest(out, s) for s in ("models", "drawings", *[f"questions_{t}" for t in counts])}
        model_floor, view_floor, view_curves_floor = model_and_view_floor(out, FLOOR_SAMPLE)
        model_phases = _model_phase_cpu(out)
        cut_floor, cut_hlr_bare, cut_hlr_curves = cut_set_floor(out, FLOOR_SAMPLE)
    floor_ms, work_ms = _floor_ratio()
    start_s = child_start_cpu()
    total = sum(wall.values())
    print(f"spare3d_csg at {f:g} scale: {n_models} models, questions {counts}, {n_workers} workers")
    print("CPU by process kind, measured in this run (getrusage of the client, every worker, their OCCT children):")
    for line in meter.lines(n_workers):
        print(line)
    by_name = {s.name: s for s in meter.stages}
    whole = sum(s.total for s in meter.stages)
    client = sum(s.serial for s in meter.stages)
    print(f"  client+scheduler CPU {client:.1f} s of {whole:.1f} s = {100 * client / whole:.2f}% of the run's CPU "
          f"(target <= 2%)")
    print("wall clock (meaningful only on an idle machine):")
    print(f"  models    {wall['models']:8.1f} s  {n_models / wall['models']:7.1f} models/s   "
          f"projected {wall['models'] / f / 60:6.1f} min")
    print(f"  drawings  {wall['drawings']:8.1f} s  {11 * n_models / wall['drawings']:7.1f} views/s    "
          f"projected {wall['drawings'] / f / 60:6.1f} min")
    for task, t in q_timings.items():
        seconds = t["wall_s"]
        print(f"  {task:28s} {t['questions']:5d} q in {seconds:7.1f} s wall   projected {seconds / f / 60:6.1f} min")
    print(f"  audit     {wall['audit']:8.1f} s   projected {wall['audit'] / f / 60:6.1f} min   ({audit.splitlines()[0]})")
    print(f"  whole run {total:8.1f} s   projected full scale {total / f / 60:6.1f} min on {n_workers} workers")
    print(f"  drawing overhead (per_view_work against exact HLR, wall, best of 3): OCCT floor {floor_ms:.2f} ms/view, "
          f"spare_gen {work_ms:.2f} ms/view, ratio {work_ms / floor_ms:.2f}")
    n_q = q_timings.get(TaskName.THREE_VIEW_TO_ISOMETRIC.value, {}).get("questions") or 0
    # the same-output floor: CPU of the OCCT calls the same bytes need (FLOOR_SAMPLE of this run's units)
    floors = {"models": (max(model_phases, model_floor), "model",
                         "the child's OCCT phases: accepted and rejected attempts' booleans and checks, STEP, BREP, "
                         "hash"),
              "drawings": (view_floor, "view", "shape preparation (fusing, seam splitting) and exact HLR of every "
                                                          "stored view")}
    print("same-output floor (CPU) and the stage's CPU per unit against it (all process kinds):")
    for stage, (floor, unit, what) in floors.items():
        s = by_name[stage]
        per = s.total / s.units
        print(f"  {stage:24s} floor {1e3 * floor:8.2f} ms/{unit}, stage {1e3 * per:8.2f} ms/{unit}: "
              f"ratio {per / floor:.2f}   ({what})")
    s, model_floor_s = by_name["models"], floors["models"][0]
    per = (s.total - n_workers * start_s) / s.units
    at_scale = 1e3 * 16 * start_s / full_models  # on 16 workers at full scale
    print(f"  {'models':24s} the same, the start-up of the {n_workers} OCCT children set apart ({start_s:.2f} CPU s "
          f"each, measured apart; a worker's first child imports OCP once: {at_scale:.2f} ms/model on 16 workers "
          f"at full scale): {1e3 * per:8.2f} ms/model: ratio {per / model_floor_s:.2f}")
    s = by_name["drawings"]
    print(f"  {'drawings':24s} floor {1e3 * view_curves_floor:8.2f} ms/view with the curve extraction "
          f"(HlrModel.project: exact HLR and the polylines sampled from its curves, as the cut-set child counts HLR): "
          f"ratio {s.total / s.units / view_curves_floor:.2f}")
    if n_q:
        print(f"  {'three_view_to_isometric':24s} floor {cut_occt / n_q:8.3f} s/question (every attempt's booleans, "
              f"checks, volumes and HLR with its curve extraction, and the STEP files, timed in the run), cut sets' "
              f"own CPU {cut_cpu / n_q:.3f} s/question (forked attempts included): ratio {cut_cpu / cut_occt:.2f}; "
              f"{len(cut_units)} cut sets for {n_q} questions; the accepted cuts alone (4 booleans + 7 views, "
              f"re-timed bare) {cut_floor:.3f} s/question")
        hlr_steps = sum(float((u.get("steps_cpu_s") or {}).get("hlr", 0.0)) for u in cut_units.values())
        bare_share = cut_hlr_bare / cut_hlr_curves if cut_hlr_curves else 1.0
        occt_only = cut_occt - hlr_steps * (1.0 - bare_share)
        print(f"  {'':24s} without the curve extraction (bare HLR is {100 * bare_share:.0f}% of HLR with curves on "
              f"the accepted cuts): floor {occt_only / n_q:.3f} s/question, ratio {cut_cpu / occt_only:.2f}")
    for stage, rows in slow.items():
        if rows:
            print(f"  slowest {stage}: " + ", ".join(f"{uid} {s:.1f} s" for uid, s in rows))


if __name__ == "__main__":
    main()
