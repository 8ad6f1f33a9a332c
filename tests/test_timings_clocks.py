"""Timing records name their clock: wall or CPU seconds, and the per-step CPU fits inside the child's CPU."""

from __future__ import annotations

import dataclasses
import json

from spare_gen.runner.results import Timings
from spare_gen.runner.stage import read_timings
from tests.conftest import spare_gen_cli

NAMES = {f.name for f in dataclasses.fields(Timings)}
TICK_SLACK_S = 0.03  # the child's CPU is read from /proc in clock ticks (10 ms); the steps with process_time


def test_stage_timings_say_wall_or_cpu_and_steps_fit_in_the_childs_cpu(tmp_path):
    out = tmp_path / "out"
    proc = spare_gen_cli("run", "--out", str(out), "--workers", "1", "--no-progress", "--stages", "models,drawings",
                         "--set", "models.csg.count=3", "--set", "seed=3")
    assert proc.returncode == 0, proc.stderr
    models, drawings = read_timings(out, "models"), read_timings(out, "drawings")
    assert len(models) == 3 and len(drawings) == 3
    for record in [*models.values(), *drawings.values()]:
        assert set(record) <= NAMES and all(k.endswith(("_wall_s", "_cpu_s")) for k in record), record
        assert record["task_wall_s"] > 0
    for record in models.values():
        steps = sum(record["steps_cpu_s"].values())  # build, check, rejected attempts, STEP, BREP, hash
        assert 0 < steps <= record["child_cpu_s"] + TICK_SLACK_S, record
    for record in drawings.values():
        views = record["steps_cpu_s"]["views"]
        assert len(views) == 11 and sum(views.values()) <= record["steps_cpu_s"]["model"] + 1e-6, record
        assert record["steps_cpu_s"]["model"] <= record["child_wall_s"] + TICK_SLACK_S
        assert 0 < record["steps_cpu_s"]["model"] <= record["child_cpu_s"] + TICK_SLACK_S, record


def test_the_question_timings_file_names_cpu_steps_and_wall_times(tmp_path):
    out = tmp_path / "out"
    counts = [f"questions.counts.{t}={n}" for t, n in (("three_view_to_isometric", 3), ("isometric_to_pose", 0),
                                                          ("pose_to_isometric", 0), ("isometric_view_generation", 0),
                                                          ("point_cloud_generation", 2))]
    proc = spare_gen_cli("run", "--out", str(out), "--workers", "2", "--no-progress", "--set", "models.csg.count=30",
                         "--set", "pool.enabled=false", "--set", "questions.allow_fewer=true",
                         *[a for c in counts for a in ("--set", c)])
    assert proc.returncode == 0, proc.stderr
    timings = json.loads((out / "questions" / "timings.json").read_text())
    assert set(timings) == {"tasks", "driver_wall_s"}
    for task in timings["tasks"].values():
        assert {"wall_s", "questions_per_wall_s", "unit_steps_cpu_s"} <= set(task)
    cuts = timings["tasks"]["three_view_to_isometric"]["unit_steps_cpu_s"]
    # the booleans, HLR and writes of the accepted and rejected attempts all run inside the cut sets' CPU (which
    # adds the forked attempts' CPU read from /proc in clock ticks: up to a tick each)
    steps = cuts["boolean"] + cuts["hlr"] + cuts["render_write"] + cuts["step"]
    assert 0 < steps <= cuts["cpu"] * 1.05 + TICK_SLACK_S, cuts
    cloud = timings["tasks"]["point_cloud_generation"]["unit_steps_cpu_s"]
    assert cloud["tessellate"] > 0 and cloud["sample"] > 0
    # every unit that ran in an OCCT child records that child's CPU next to its steps
    for record in read_timings(out, "questions_point_cloud_generation").values():
        steps = sum(record["steps_cpu_s"].values())
        assert 0 < steps <= record["child_cpu_s"] + TICK_SLACK_S, record
    assert all(r["child_cpu_s"] > 0 for r in read_timings(out, "questions_three_view_to_isometric").values())
