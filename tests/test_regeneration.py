"""Regeneration you can trust: same bytes everywhere, honest resume, machine faults retried, bad input one line.

Guards the seven defects of the stage-contract issue: STEP counters (byte identity on the shared CAD files),
load-dependent HLR budgets (CPU-time budgets; 1 vs 2 workers vs a remote cluster), stale resume (four
settings/input changes, each compared with a fresh run), transient faults recorded as final (SIGKILL and
ENOSPC hooks), broken HLR marked ok (planted far point), bad input (one line, exit code), validate coverage.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spare_gen.jobs.regenerate import run
from spare_gen.config import load_config
from spare_gen.runner.cluster import open_client
from spare_gen.validate import validate
from tests.conftest import REPO, differing_files, spare_gen_cli

# A small run of every stage: 12 models, 2 questions per task, a 2-model pool.
SMALL = [  # 2 models per Parquet part: 6 parts, so interrupts and faults land between parts
    "models.csg.count=12", "runner.shard_units=2", "questions.allow_fewer=true", "pool.models=2",
    *[f"questions.counts.{t}=2" for t in ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric",
                                          "isometric_view_generation", "point_cloud_generation")],
]
QUIET = ["runner.progress=false", "runner.dashboard=false"]
# Files that record the config itself (test hooks included): they differ when only the hooks differ.
CONFIG_RECORDS = ("dataset.json", "README.md")
# The resume cache: after a settings change it still holds entries for units the new settings do not use
# (reused if those settings come back); it is not part of the dataset.
RESUME_CACHE = (".units/",)


@pytest.fixture(scope="module")
def shared_cluster():
    """One embedded 2-worker cluster for this module's small runs (saves a cluster start per run)."""
    with open_client("", 2, dashboard=False, quiet=True) as client:
        yield client.scheduler.address


def _run(out: Path, *overrides: str, scheduler: str = "", stages=("models", "drawings", "questions", "pool")):
    placement = [f'runner.scheduler="{scheduler}"'] if scheduler else []
    cfg = load_config(None, [f'out="{out}"', *QUIET, *placement, *overrides])
    run(cfg, stages=stages)
    return out


def _assert_same(a: Path, b: Path, ignore: tuple[str, ...] = ()) -> None:
    diff = differing_files(a, b, ignore)
    assert not diff, f"{len(diff)} file(s) differ between {a} and {b}: {diff[:20]}"


# --------------------------------------------------------------------------------------------- same bytes


@pytest.mark.slow
def test_default_config_gives_the_same_bytes_on_one_worker_and_on_a_remote_cluster(small_dataset, tmp_path,
                                                                                    remote_scheduler):
    config = REPO / "configs" / "default.toml"
    one = tmp_path / "one_worker"
    run(load_config(config, [f'out="{one}"', *QUIET, "runner.workers=1"]))
    _assert_same(small_dataset, one)
    remote = tmp_path / "remote"
    proc = spare_gen_cli("run", "-c", str(config), "--out", str(remote), "--no-progress",
                         "--scheduler", remote_scheduler)
    assert proc.returncode == 0, proc.stderr
    _assert_same(small_dataset, remote)


@pytest.mark.slow
def test_real_cad_files_give_the_same_bytes_twice(tmp_path, real_cad, shared_cluster):
    common = ['models.source="files"', f'models.files.root="{real_cad}"', "render.exact_timeout_s=4"]
    a = _run(tmp_path / "a", *common, scheduler=shared_cluster, stages=("models", "drawings"))
    b = _run(tmp_path / "b", *common, "runner.workers=1", stages=("models", "drawings"))
    _assert_same(a, b)
    multi = [r for r in pq.read_table(a / "models.parquet").to_pylist() if (r["n_solids"] or 0) > 1]
    assert multi, "the shared CAD files include multi-body shapes"
    step = (a / multi[0]["step_path"]).read_text(errors="replace")
    assert "NEXT_ASSEMBLY_USAGE_OCCURRENCE('1'" in step  # renumbered from 1 in every file


# ------------------------------------------------------------------------------------------ honest resume


@pytest.mark.slow
def test_rerun_after_a_settings_change_matches_a_fresh_run(tmp_path, shared_cluster):
    reused = _run(tmp_path / "reused", *SMALL, scheduler=shared_cluster)
    changes = ["models.csg.primitive_counts=[3,4]", "render.visible_width=1.2", "pool.deflection=0.02"]
    for k in range(len(changes)):
        settings = [*SMALL, *changes[: k + 1]]
        _run(reused, *settings, scheduler=shared_cluster)
        fresh = _run(tmp_path / f"fresh{k}", *settings, scheduler=shared_cluster)
        _assert_same(reused, fresh, ignore=RESUME_CACHE)
    assert validate(reused) == []


@pytest.mark.slow
def test_rerun_after_a_cad_file_is_edited_in_place_matches_a_fresh_run(tmp_path, real_cad, shared_cluster):
    folder = tmp_path / "cad"
    folder.mkdir()
    for name in ("bug3883_xr2-ct-214_l-bracket.stp", "io1-ug-214.stp"):
        shutil.copy(real_cad / name, folder / name)
    files = ['models.source="files"', f'models.files.root="{folder}"', "pool.models=0"]
    stages = ("models", "drawings", "pool")
    reused = _run(tmp_path / "reused", *files, scheduler=shared_cluster, stages=stages)
    before = pq.read_table(reused / "views.parquet").to_pylist()
    (folder / "io1-ug-214.stp").write_bytes((real_cad / "ANC101.stp").read_bytes())  # edited in place
    _run(reused, *files, scheduler=shared_cluster, stages=stages)
    fresh = _run(tmp_path / "fresh", *files, scheduler=shared_cluster, stages=stages)
    _assert_same(reused, fresh, ignore=RESUME_CACHE)
    after = pq.read_table(reused / "views.parquet").to_pylist()
    assert [r["svg_sha256"] for r in after if r["model_id"] == "io1-ug-214"] != \
        [r["svg_sha256"] for r in before if r["model_id"] == "io1-ug-214"]


# -------------------------------------------------------------------------------------------- machine faults


def _recorded_units(out: Path, stage: str) -> set[str]:
    """Units a stage that writes Parquet parts has recorded as done (in the parts' index files)."""
    return {uid for p in (out / ".units" / stage).glob("part-*.json") for uid in json.loads(p.read_text())["units"]}


@pytest.fixture(scope="module")
def small_reference(tmp_path_factory, shared_cluster) -> Path:
    """An uninterrupted run of SMALL, to compare interrupted or faulty runs with."""
    return _run(tmp_path_factory.mktemp("small") / "reference", *SMALL, scheduler=shared_cluster)


@pytest.mark.slow
def test_machine_faults_are_retried_and_never_recorded(tmp_path, shared_cluster, small_reference):
    reference = small_reference
    hooks = ['debug.sigkill=["drawings:csg_000002"]', 'debug.enospc=["models:csg_000004", "wireframes:csg_000001"]']
    faulty = _run(tmp_path / "faulty", *SMALL, *hooks, scheduler=shared_cluster)  # first attempts fail, retries pass
    _assert_same(reference, faulty, ignore=CONFIG_RECORDS)

    persistent = tmp_path / "persistent"
    base = ["run", "--out", str(persistent), "--no-progress", "--scheduler", shared_cluster,
            *[a for s in SMALL for a in ("--set", s)]]
    always = [a for s in [*hooks, "debug.transient_attempts=99"] for a in ("--set", s)]
    proc = spare_gen_cli(*base, *always)
    assert proc.returncode == 75, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "failed because of the machine" in last and "rerun the same command" in last
    recorded = _recorded_units(persistent, "models")
    assert "csg_000004" not in recorded  # never recorded as done
    assert "csg_000003" in recorded and len(recorded) == 11  # the rest was
    proc = spare_gen_cli(*base)  # the disk has room again
    assert proc.returncode == 0, proc.stderr
    assert "already done, resuming" in proc.stderr
    _assert_same(reference, persistent)


@pytest.mark.slow
def test_ctrl_c_is_a_clean_stop_and_the_rerun_equals_an_uninterrupted_run(tmp_path, small_reference):
    import os
    import signal
    import sys
    import time

    out = tmp_path / "interrupted"
    cmd = [sys.executable, "-m", "spare_gen.cli", "run", "--out", str(out), "--no-progress",
           "--set", "runner.dashboard=false", *[a for s in SMALL for a in ("--set", s)]]
    proc = subprocess.Popen(cmd, cwd=REPO, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    units = out / ".units" / "drawings"  # one index per finished part of 2 models
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (units.exists() and len(list(units.glob("*.json"))) >= 2):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C: the whole foreground group
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "leaked" not in stderr
    assert stderr.strip().splitlines()[-1].startswith("spare-gen: interrupted; finished units are kept: rerun")
    assert sum("interrupted" in line for line in stderr.splitlines()) == 1, stderr  # exactly one line says so
    done = _recorded_units(out, "drawings")
    assert 4 <= len(done) < 12, "the interrupt should land mid-stage"
    for p in units.glob("*.json"):  # in-flight units are simply not done: nothing crashed or fell back
        text = p.read_text()
        assert '"crashed"' not in text and "SIGINT" not in text and '"poly"' not in text, p.name
    rerun = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    _assert_same(small_reference, out)


def _spawned_workers(pid: int) -> bool:
    """Whether ``pid`` has started a multiprocessing-spawned child yet (an embedded Dask worker on its way)."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for child in children:
        try:
            if b"spawn_main" in open(f"/proc/{child}/cmdline", "rb").read():
                return True
        except OSError:
            continue
    return False if os.path.exists(f"/proc/{pid}") else True


@pytest.mark.slow
def test_sigint_during_cluster_start_up_and_sigterm_to_the_main_pid_stop_in_one_line_and_resume_identical(
        tmp_path, small_reference):
    import signal
    import sys
    import time

    out = tmp_path / "stopped"
    cmd = [sys.executable, "-m", "spare_gen.cli", "run", "--out", str(out), "--no-progress", "--workers", "2",
           "--set", "runner.dashboard=false", *[a for s in SMALL for a in ("--set", s)]]

    def stop(when, send) -> tuple[int, str, float]:
        proc = subprocess.Popen(cmd, cwd=REPO, start_new_session=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not when(proc.pid):
            time.sleep(0.01)
        assert proc.poll() is None, "the run should still be going"
        sent = time.monotonic()
        send(proc.pid)
        _, stderr = proc.communicate(timeout=120)
        return proc.returncode, stderr, time.monotonic() - sent

    # Ctrl-C to the whole group while the embedded cluster starts (its workers are being spawned)
    code, stderr, seconds = stop(_spawned_workers, lambda pid: os.killpg(pid, signal.SIGINT))
    assert code == 130 and "Traceback" not in stderr and "leaked" not in stderr, stderr
    assert [l for l in stderr.splitlines() if "interrupted" in l] == [stderr.strip().splitlines()[-1]]
    assert stderr.strip().splitlines()[-1].startswith("spare-gen: interrupted; finished units are kept: rerun")
    assert seconds < 60 and not (out / "dataset.json").exists()

    # SIGTERM to the main process alone (what a batch scheduler or `kill` sends) in the middle of the drawings
    units = out / ".units" / "drawings"
    code, stderr, seconds = stop(lambda pid: units.exists() and len(list(units.glob("*.json"))) >= 1,
                                 lambda pid: os.kill(pid, signal.SIGTERM))
    assert code == 143 and "Traceback" not in stderr and "leaked" not in stderr, stderr
    assert stderr.strip().splitlines()[-1].startswith("spare-gen: stopped by SIGTERM; finished units are kept")
    assert seconds < 60, f"took {seconds:.0f} s to stop"
    assert json.loads((out / "run.json").read_text())["outcome"] == "stopped: Stopped"
    rerun = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    _assert_same(small_reference, out)


@pytest.mark.slow
def test_a_disk_that_fills_mid_run_is_one_line_and_exit_75(tmp_path):
    """A real full file system: a 80 MB tmpfs (mounted in a private mount namespace) that a filler file fills once
    the drawings started; the run.json written as the run stops meets the full disk too and must not mask it."""
    import sys

    disk, err, rc = tmp_path / "disk", tmp_path / "stderr.txt", tmp_path / "rc.txt"
    disk.mkdir()
    run_cmd = " ".join([sys.executable, "-m", "spare_gen.cli", "run", "--out", f"{disk}/out", "--no-progress",
                        "--workers", "2", "--set", "runner.dashboard=false",
                        *[f"--set {s}" for s in SMALL]])
    script = f"""set -e
mount -t tmpfs -o size=80m tmpfs {disk}
{run_cmd} 2>{err} &
pid=$!
until ls {disk}/out/.units/drawings/*.json >/dev/null 2>&1 || ! kill -0 $pid 2>/dev/null; do sleep 0.05; done
dd if=/dev/zero of={disk}/filler bs=1M 2>/dev/null || true
set +e
wait $pid
echo $? >{rc}
"""
    proc = subprocess.run(["unshare", "--mount", "--map-root-user", "sh", "-c", script], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    stderr = err.read_text()
    assert rc.read_text().strip() == "75", stderr
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("spare-gen: ") and "rerun the same command" in last, stderr


def test_a_second_run_on_a_locked_output_folder_is_one_line_and_exit_2_and_a_dead_holders_lock_is_taken_over(
        tmp_path):
    import socket
    import sys

    from spare_gen.store.preflight import LOCK_FILE, output_lock

    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom spare_gen.store.preflight import output_lock\n"
                               "with output_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(600)\n",
                               str(out)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        proc = spare_gen_cli("run", "--out", str(out), "--no-progress")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.splitlines() == [
            f"spare-gen: error: output folder {out}: in use by another spare-gen run (pid {holder.pid} on host "
            f"{socket.gethostname()}); wait for it to finish or choose another --out"]
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # the second run wrote nothing
    finally:
        holder.kill()  # SIGKILL: no clean-up, its lock file stays behind
        holder.wait(timeout=30)
    assert (out / LOCK_FILE).read_text() == f"pid {holder.pid} on host {socket.gethostname()}\n"
    with output_lock(out):  # the dead holder's lock is taken over
        assert (out / LOCK_FILE).read_text().startswith(f"pid {os.getpid()} ")
    assert not (out / LOCK_FILE).exists()


# ------------------------------------------------------------------------------------------ no wrong "ok"


def test_a_broken_exact_hlr_result_falls_back_and_no_ok_view_leaves_its_box(tmp_path, shared_cluster):
    from spare_gen.stages.drawings.child import BOX_MARGIN

    out = _run(tmp_path / "out", "models.csg.count=4", 'debug.broken_hlr=["drawings:csg_000001"]',
               scheduler=shared_cluster, stages=("models", "drawings"))
    drawings = {r["model_id"]: r for r in pq.read_table(out / "drawings.parquet").to_pylist()}
    assert drawings["csg_000001"]["hlr_method"] == "poly" and "no plausible drawing" in \
        drawings["csg_000001"]["fallback_reason"]
    assert drawings["csg_000001"]["status"] == "ok" and drawings["csg_000002"]["hlr_method"] == "exact"
    size = 200
    for view in pq.read_table(out / "views.parquet").to_pylist():
        assert view["status"] == "ok"
        pts = np.concatenate([np.asarray(p) for p in view["visible"] + view["hidden"]])
        # every line on the canvas: the frame is sized to the model, not to a stray point
        assert pts.min() >= -BOX_MARGIN * size and pts.max() <= (1 + BOX_MARGIN) * size, view["model_id"]


def test_plausibility_check_on_real_hlr_output(tmp_path):
    from drawings_shapes import L_BLOCK, write_model
    from spare_gen.cad import read_shape
    from spare_gen.cad.hlr import HlrModel
    from spare_gen.canvas.poses import fixed_poses
    from spare_gen.stages.drawings.child import _plant_far_point, plausible_lines, projected_box

    hlr = HlrModel(read_shape(write_model(L_BLOCK, tmp_path, "l")), "exact")
    for pose in fixed_poses():
        box = projected_box(hlr.bbox, pose)
        lines = hlr.project(pose.direction, pose.x_direction)
        assert plausible_lines(lines, box), pose.name
        assert not plausible_lines(_plant_far_point(lines, box), box), pose.name


# ------------------------------------------------------------------------------------------------ bad input


def _as_nobody(cmd: list[str]) -> list[str]:
    """Run as an ordinary user: root reads and writes anywhere, so permission cases need one."""
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", *cmd]


@pytest.fixture
def public_tmp():
    """A temporary folder an ordinary user can enter (pytest's own is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="spare_gen-test-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_bad_cad_inputs_become_rows_and_a_loose_edge_is_counted_not_drawn(public_tmp, real_cad, shared_cluster):
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeEdge  # test-only shape building

    from spare_gen import cad
    from spare_gen.cad.build import compound, loose_parts
    from OCP.gp import gp_Pnt

    folder = public_tmp / "cad"
    folder.mkdir()
    folder.chmod(0o755)
    text = (real_cad / "io1-ug-214.stp").read_bytes()
    comment = b"/* exported by a tool that writes a long licence comment before the header: " + b"x" * 60 + b" */\n"
    assert len(comment) > 100
    (folder / "commented.step").write_bytes(comment + text)
    solids = cad.read_shape(real_cad / "red_cube_blue_cylinder.step")
    far_edge = BRepBuilderAPI_MakeEdge(gp_Pnt(0, 0, 60), gp_Pnt(40, 40, 100)).Edge()
    cad.write_brep(compound([solids, far_edge]), folder / "solids_and_edge.brep")
    assert loose_parts(cad.read_shape(folder / "solids_and_edge.brep"))
    for p in folder.iterdir():
        p.chmod(0o644)
    out = _run(public_tmp / "out", 'models.source="files"', f'models.files.root="{folder}"',
               scheduler=shared_cluster, stages=("models", "drawings"))
    rows = {r["model_id"]: r for r in pq.read_table(out / "models.parquet").to_pylist()}
    assert rows["commented"]["status"] == "ok", rows["commented"]["error"]
    assert rows["solids_and_edge"]["status"] == "ok" and rows["solids_and_edge"]["n_solids"] == 2
    drawings = {r["model_id"]: r for r in pq.read_table(out / "drawings.parquet").to_pylist()}
    assert drawings["solids_and_edge"]["status"] == "ok"
    assert drawings["solids_and_edge"]["n_loose_edges"] == 1
    assert drawings["solids_and_edge"]["bbox"][5] <= 10.5  # the loose edge (up to z = 100) is left out of the framing

    # An unreadable file (as an ordinary user: root reads anything) is found, hashed and loaded as the
    # model stage does it, and becomes one failed row's error instead of stopping the run.
    secret = folder / "secret.step"
    secret.write_bytes(text)
    secret.chmod(0)
    script = (
        "from spare_gen.stages.models.files import discover\n"
        "from spare_gen.config.schema import CsgConfig\n"
        "from spare_gen.stages.models.settings import ModelSettings\n"
        "from spare_gen.stages.models.child import load_file_model\n"
        f"items = discover({str(folder)!r}, ['.step'], 50.0)\n"
        "item = next(i for i in items if i.model_id == 'secret')\n"
        f"settings = ModelSettings(stage='models', seed=0, out_dir={str(public_tmp / 'out2')!r}, timeout_s=60, "
        "csg=CsgConfig())\n"
        "try:\n"
        "    load_file_model({'unit_id': 'secret', 'model_id': 'secret', 'source_path': str(item.path)}, settings, None)\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    import sys

    proc = subprocess.run(_as_nobody([sys.executable, "-c", script]), cwd=public_tmp, capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "secret.step: cannot be read (Permission denied)", proc.stdout


def spare_gen_cli_args(*args: str) -> list[str]:
    import sys

    return [sys.executable, "-m", "spare_gen.cli", *args]


def test_unusable_output_folder_and_unreachable_scheduler_are_one_line_exit_2(public_tmp):
    tmp_path = public_tmp
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    cases = {
        "inside a file": (["--out", str(blocker / "out")], "cannot be created"),
        "read-only": (["--out", str(locked)], "not writable (Permission denied)"),
        "unreachable scheduler": (["--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9"],
                                  "cannot reach the Dask scheduler tcp://127.0.0.1:9"),
    }
    for name, (args, expected) in cases.items():
        cmd = spare_gen_cli_args("run", "--no-progress", *args)
        if name == "read-only":  # root may write anywhere: run as an ordinary user
            cmd = _as_nobody(cmd)
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO)})
        assert proc.returncode == 2, (name, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0] and "Traceback" not in proc.stderr, (name, proc.stderr)
    assert list(locked.iterdir()) == [] and not (tmp_path / "o").exists()


# -------------------------------------------------------------------------------------------------- validate


def test_validate_catches_an_edited_seed_or_citation_in_dataset_json(tmp_path):
    from spare_gen.store.manifest import write_manifest

    config = load_config(None, [f'out="{tmp_path}"'])
    for key, edit in (("seed", lambda r: {**r, "seed": r["seed"] + 1}),
                      ("citation", lambda r: {**r, "config": {**r["config"], "card": {
                          **r["config"]["card"], "citation": "@misc{someone_else}"}}})):
        out = tmp_path / key
        out.mkdir()
        write_manifest(out, config, {"models": "models: ok 1"}, complete=True)  # a complete record, no tables
        assert validate(out) == []
        record = json.loads((out / "dataset.json").read_text())
        (out / "dataset.json").write_text(json.dumps(edit(record), indent=2))
        problems = validate(out)
        assert len(problems) == 1 and "dataset.json was edited since the run wrote it" in problems[0], problems


def test_validate_catches_an_edited_table_and_a_deleted_unreferenced_drawing(small_dataset, tmp_path):
    assert validate(small_dataset) == []
    edited = tmp_path / "edited"
    shutil.copytree(small_dataset, edited)
    part = sorted((edited / "views.parquet").glob("part-*.parquet"))[1]  # a part of views.parquet
    views = pq.read_table(part)
    extents = views.column("extent").to_pylist()
    extents[0] = extents[0] + 1.0
    pq.write_table(views.set_column(views.schema.get_field_index("extent"), "extent", pa.array(extents)), part)
    assert any(f"views.parquet/{part.name} changed" in p for p in validate(edited))

    deleted = tmp_path / "deleted"
    shutil.copytree(small_dataset, deleted)
    used = set(pq.read_table(deleted / "questions" / "files.parquet").column("path").to_pylist())
    unused = next(r["png"] for r in pq.read_table(deleted / "views.parquet").to_pylist() if r["png"] not in used)
    (deleted / unused).unlink()
    problems = validate(deleted)
    assert any(unused in p and "does not exist" in p for p in problems), problems
