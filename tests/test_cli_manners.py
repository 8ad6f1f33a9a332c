"""The commands' manners: config named first, one default config from any folder, exit 2 on a missing folder,
no traceback for a closed pipe or an early Ctrl-C, the extra to install named, no test hooks published, one
default split, and metric-report's progress, summary and "wrote" line."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spare_gen.cli import READS_FOLDER, build_parser, main
from spare_gen.config import load_config
from spare_gen.config.loader import DEFAULT_CONFIG_FILE
from spare_gen.card.dataset import card_text
from spare_gen.stages.questions.layout import DEFAULT_SPLIT
from spare_gen.stages.questions.schema import QuestionsSummary
from spare_gen.wireframe import Wireframe
from tests.conftest import REPO, TINY_OVERRIDES, spare_gen_cli

CLI = [sys.executable, "-m", "spare_gen.cli"]


def test_the_default_config_ships_in_the_package_and_the_repository_copy_is_identical():
    assert DEFAULT_CONFIG_FILE.parent == REPO / "spare_gen" / "config"
    assert DEFAULT_CONFIG_FILE.read_bytes() == (REPO / "configs" / "default.toml").read_bytes()
    readme = (REPO / "README.md").read_text()
    assert "spare-gen run                                         # configs/default.toml" in readme


def test_every_run_names_its_config_first_and_gives_the_same_config_from_any_folder(tmp_path):
    inside = spare_gen_cli("config", cwd=REPO)
    outside = spare_gen_cli("config", cwd=tmp_path)
    assert inside.returncode == outside.returncode == 0
    assert json.loads(inside.stdout) == json.loads(outside.stdout)
    assert json.loads(outside.stdout)["models"]["csg"]["count"] == 240  # the recipe, not the schema's defaults
    said = f"spare-gen: config: built-in defaults (configs/default.toml: {DEFAULT_CONFIG_FILE})"
    assert outside.stderr.splitlines()[0] == said
    recipe = tmp_path / "mine.toml"
    recipe.write_text("seed = 3\n")
    named = spare_gen_cli("config", "--config", str(recipe), cwd=tmp_path)
    assert named.stderr.splitlines()[0] == f"spare-gen: config {recipe}" and json.loads(named.stdout)["seed"] == 3


MINIMAL_ARGS = {  # each command's other required arguments
    "rank": ["answers.csv"], "learn-metric": ["answers.csv"], "evaluate": ["p.csv", "--task", "pose_to_isometric"],
    "evaluate-poses": ["p.csv"], "export-spare3d": ["dest"], "train-baseline": ["--task", "pose_to_isometric"],
    "export": ["--task", "pose_to_isometric"], "cache": ["--task", "pose_to_isometric"],
    "learning-curve": ["--task", "isometric_to_pose"],
}


@pytest.mark.parametrize("command", READS_FOLDER)
def test_a_missing_input_folder_is_one_line_and_exit_2(command, tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "dir"
    assert main([command, str(missing), *MINIMAL_ARGS.get(command, [])]) == 2
    err = capsys.readouterr().err
    assert err == f"spare-gen {command}: error: folder {str(missing)!r} does not exist\n"
    assert not (tmp_path / "no").exists()


def test_a_reader_that_closes_the_pipe_gets_no_traceback(tmp_path):
    proc = subprocess.Popen([*CLI, "config"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    proc.stdout.close()  # as `| head` does once it has its lines: every write now meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141  # 128 + SIGPIPE, as for a tool the pipe stopped
    assert err.splitlines() == [f"spare-gen: config: built-in defaults (configs/default.toml: {DEFAULT_CONFIG_FILE})"
                                ], err


def _loaded(pid: int, library: str) -> bool:
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def test_an_early_ctrl_c_ends_in_one_line_with_exit_130(tmp_path):
    """SIGINT while the command is still importing its modules (numpy mapped, the CLI not yet parsed)."""
    proc = subprocess.Popen([*CLI, "run", "--out", str(tmp_path / "out")], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(REPO)))
    deadline = time.monotonic() + 60
    while not _loaded(proc.pid, "numpy") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err.decode() and err.decode().splitlines()[-1] == "spare-gen: interrupted"
    assert not (tmp_path / "out").exists()


def _stop_at(moment: str, send, tmp_path: Path) -> tuple[int, list[str]]:
    """Start ``spare-gen run`` through its console script in a session of its own, wait for ``moment`` (``imports``:
    numpy mapped; ``config``: the config line said; ``cluster``: the embedded workers started), ``send`` the
    process its signal, and return its exit code and stderr lines."""
    script = Path(sys.executable).parent / "spare-gen"
    out = tmp_path / moment
    proc = subprocess.Popen([str(script), "run", "--out", str(out), "--no-progress", "--workers", "2", "--stages",
                             "models", "--set", "runner.dashboard=false", "--set", "models.csg.count=200"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    said: list[str] = []
    if moment == "imports":
        deadline = time.monotonic() + 60
        while not _loaded(proc.pid, "numpy") and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
    else:
        awaited = "spare-gen: config" if moment == "config" else "embedded Dask LocalCluster"
        for line in proc.stderr:
            said.append(line.rstrip("\n"))
            if awaited in line:
                break
    assert proc.poll() is None, said
    send(proc.pid)
    rest = proc.communicate(timeout=120)[1]
    return proc.returncode, said + rest.splitlines()


STOP_INSIDE_A_GC_CALLBACK = """
import gc, os, signal, sys
from spare_gen.console import guard_startup, run_command

def command():
    def callback(phase, info):  # as distributed's gc diagnosis: Python code that gc runs, where raising is swallowed
        if phase == "start":
            gc.callbacks.remove(callback)
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs here, inside the callback
                pass
    gc.callbacks.append(callback)
    gc.collect()
    for _ in range(10 ** 7):
        pass
    print("ran to the end")
    return 0

guard_startup()
sys.exit(run_command(command))
"""


def test_a_sigterm_that_lands_inside_a_gc_callback_still_stops_the_command_in_one_line():
    """Python swallows an exception raised in a gc callback ("Exception ignored in ..."): a SIGTERM that landed there
    while the embedded cluster started let the run go on to the end and exit 0."""
    proc = subprocess.run([sys.executable, "-c", STOP_INSIDE_A_GC_CALLBACK], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr.splitlines() == ["spare-gen: stopped by SIGTERM"] and "ran to the end" not in proc.stdout


@pytest.mark.parametrize("moment", ["imports", "config", "cluster"])
def test_a_sigterm_at_any_moment_of_a_run_is_one_line_and_exit_143(moment, tmp_path):
    code, lines = _stop_at(moment, lambda pid: os.kill(pid, signal.SIGTERM), tmp_path)
    assert code == 143, lines
    stops = [line for line in lines if "stopped by SIGTERM" in line]
    assert stops == [lines[-1]] and not any("Traceback" in line for line in lines), lines


@pytest.mark.parametrize("moment", ["imports", "cluster"])
def test_a_ctrl_c_to_the_whole_process_group_is_one_interrupted_line(moment, tmp_path):
    """What a terminal does on Ctrl-C: SIGINT to spare-gen and every process it started (its Dask workers, which
    re-import the console script, say nothing of their own)."""
    code, lines = _stop_at(moment, lambda pid: os.killpg(pid, signal.SIGINT), tmp_path)
    assert code == 130, lines
    assert [line for line in lines if "interrupted" in line] == [lines[-1]], lines
    assert not any("Traceback" in line for line in lines), lines


def test_the_card_publishes_no_test_hooks(small_dataset):
    card = (small_dataset / "README.md").read_text()
    assert '"debug"' not in card and "broken_hlr" not in card and '"test_hooks": "none active"' in card
    summary = QuestionsSummary.read(small_dataset / "questions" / "summary.json")
    hooked = load_config(REPO / "configs" / "default.toml", ['debug.crash=["models:csg_000003"]'])
    text = card_text(hooked, summary, small_dataset)
    assert '"debug"' not in text and "csg_000003" not in text and '"test_hooks": "active: crash"' in text


@pytest.mark.parametrize("command", ["export", "evaluate", "show"])
def test_every_command_reading_one_split_defaults_to_the_same_one_and_says_so(command):
    required = {"export": ["--task", "t"], "evaluate": ["p.csv", "--task", "t"], "show": []}[command]
    parser = build_parser()
    assert parser.parse_args([command, "out", *required]).split == DEFAULT_SPLIT == "test"
    sub = parser._subparsers._group_actions[0].choices[command]
    assert f"train, val or test (default {DEFAULT_SPLIT})" in " ".join(sub.format_help().split())


def _cube(shift: float) -> Wireframe:
    v = np.array(list(itertools.product([0, 1], [0, 1], [0, 1.5 + shift])), float)
    e = [(i, j) for i in range(8) for j in range(i + 1, 8) if np.count_nonzero(v[i] - v[j]) == 1]
    return Wireframe(v, e)


def test_metric_report_shows_progress_per_wireframe_a_short_summary_and_what_it_wrote(tmp_path):
    rows = [{"model_id": f"m{k}", "status": "ok", **_cube(0.5 * k).to_row()} for k in range(3)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "wireframes.parquet")
    proc = spare_gen_cli("metric-report", str(tmp_path), "--models", "0", "--workers", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    md, table = tmp_path / "reports" / "metric_properties.md", tmp_path / "reports" / "metric_properties.parquet"
    assert md.is_file() and table.is_file()
    assert "spare-gen metric-report: testing 3 wireframes (0 extracted)" in proc.stderr
    assert "3/3" in proc.stderr and "wireframe" in proc.stderr.rsplit("metric-report: testing", 1)[1]  # the bar
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and "| Test |" not in proc.stdout  # a summary, not the Markdown table
    assert lines[0].startswith("spare-gen metric-report: 3 wireframes (0 extracted), tests passed per metric: ")
    assert lines[1] == f"spare-gen metric-report: wrote {md} and {table}"


def test_every_option_has_help_and_shows_its_default():
    """train-baseline's too: its flags are built from the training options (spare_gen.baseline.options)."""
    import argparse

    parser = build_parser()
    missing = []
    for name, sub in parser._subparsers._group_actions[0].choices.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            label = f"{name} {'/'.join(action.option_strings) or action.dest}"
            if not action.help:
                missing.append(f"{label}: no help")
            elif action.option_strings and action.default not in (None, False, []) and "default" not in action.help:
                missing.append(f"{label}: default {action.default!r} not shown")
    assert not missing, missing


def test_an_unknown_option_names_the_command_and_the_closest_option(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--sett", "x=1"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: spare-gen run ")
    assert err.splitlines()[-1] == "spare-gen run: error: unrecognized arguments: --sett x=1 (did you mean --set?)"


def test_progress_is_a_bar_on_a_terminal_and_plain_lines_without_carriage_returns_in_a_pipe():
    import pty

    from spare_gen.console import PlainProgress, progress

    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        bar = progress(5, "drawings", "unit", file=pipe)
        assert isinstance(bar, PlainProgress)
        bar.every_s = 0  # a line per update, as a long stage gives one every PLAIN_EVERY_S seconds
        for _ in range(5):
            bar.update(1)
        bar.close()
    text = os.read(read_end, 10_000).decode()
    os.close(read_end)
    assert "\r" not in text and text.splitlines()[0].startswith("spare-gen: drawings: 1/5 units (")
    assert text.splitlines()[-1].startswith("spare-gen: drawings: 5/5 units") and len(text.splitlines()) == 5
    quiet_read, quiet_write = os.pipe()
    with os.fdopen(quiet_write, "w") as pipe:
        off = progress(5, "drawings", "unit", enabled=False, file=pipe)
        off.update(5)
        off.close()
    assert os.read(quiet_read, 100) == b""
    os.close(quiet_read)
    leader, follower = pty.openpty()
    with os.fdopen(follower, "w") as terminal:
        bar = progress(5, "drawings", "unit", file=terminal)
        assert not isinstance(bar, PlainProgress)  # tqdm's bar, redrawn in place
        bar.update(5)
        bar.close()
    assert b"\r" in os.read(leader, 10_000)
    os.close(leader)


def test_a_plain_progress_says_a_line_every_period_also_while_no_unit_ends():
    from spare_gen.console import PlainProgress

    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        bar = PlainProgress(11, "drawings", "unit", file=pipe, every_s=1)
        time.sleep(3.5)  # a stage whose units all end in its last seconds
        bar.update(11)
        bar.close()
    lines = os.read(read_end, 10_000).decode().splitlines()
    os.close(read_end)
    waiting = [line for line in lines if line.startswith("spare-gen: drawings: 0/11 units (")]
    assert len(waiting) >= 2 and lines[-1].startswith("spare-gen: drawings: 11/11 units ("), lines


def test_every_progress_bar_goes_through_the_console_so_logs_get_plain_lines_with_their_postfix():
    """A tqdm bar made anywhere else would write carriage returns into a pipe (metric-report, export-spare3d and
    train-baseline did); the plain lines carry what a bar shows after its count (a training step's epoch and loss)."""
    root = Path(__file__).resolve().parents[1] / "spare_gen"
    makers = [str(f.relative_to(root)) for f in root.rglob("*.py") if "tqdm" in f.read_text()]
    assert makers == ["console.py"]
    from spare_gen.console import PlainProgress

    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        bar = PlainProgress(4, "train isometric_to_pose resnet50", "step", file=pipe, every_s=0)
        bar.set_postfix(epoch=1, loss="1.386")
        bar.update(1)
        bar.close()
    text = os.read(read_end, 10_000).decode()
    os.close(read_end)
    assert text.startswith("spare-gen: train isometric_to_pose resnet50: 1/4 steps (") and "epoch=1, loss=1.386)" in text


def test_validate_on_a_folder_that_is_no_dataset_is_bad_input_in_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("a user's folder, not a dataset")
    done = spare_gen_cli("validate", str(tmp_path), timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [f"spare-gen: error: {tmp_path} is not a spare_gen dataset: it has no "
                                        f"dataset.json (`spare-gen run --out {tmp_path}` writes one)"]


def test_empty_splits_are_one_warning_that_the_run_says_and_the_card_repeats():
    from spare_gen.card.dataset import _counts
    from spare_gen.stages.questions.layout import empty_splits, empty_splits_warning
    from spare_gen.stages.questions.schema import QuestionsSummary

    produced = {"pose_to_isometric": {"train": 3, "val": 1, "test": 0}, "isometric_to_pose": {"train": 3, "val": 1, "test": 0}}
    empty = empty_splits(produced)
    assert empty == ["pose_to_isometric/test", "isometric_to_pose/test"]
    line = empty_splits_warning(empty)
    assert line.startswith("WARNING: 2 empty split(s)") and "raise questions.counts" in line
    summary = QuestionsSummary(requested={t: 4 for t in produced}, planned={t: 4 for t in produced},
                               produced=produced, usable_models={}, needed_models={}, filtered_models={},
                               rejected_models={}, rejected_candidates={}, surplus_models={}, answers={},
                               primitive_mix={})
    assert f"**{line}.**" in _counts(summary)


def test_each_question_task_says_its_own_progress_line_by_its_name(tiny_dataset, tmp_path, capfd):
    """One line per task, named ``questions <task>``; a task without per-model work says so instead of nothing."""
    import shutil

    from spare_gen.jobs.regenerate import run
    from spare_gen.stages.questions.tasks import TASK_SPECS

    out = tmp_path / "out"
    shutil.copytree(tiny_dataset, out, symlinks=True)
    capfd.readouterr()
    cfg = load_config(REPO / "configs" / "default.toml", [
        f'out="{out}"', "runner.progress=true", "runner.dashboard=false", "runner.workers=1",
        *TINY_OVERRIDES, "questions.duplicate_tolerance_px=1.25",  # every task's units are made anew
        *(f"questions.counts.{task.value}=3" for task in TASK_SPECS)])  # a few of them
    run(cfg, stages=("questions",))
    lines = capfd.readouterr().err.splitlines()
    for task, spec in TASK_SPECS.items():
        said = [line for line in lines if line.startswith(f"spare-gen: questions {task.value}: ")]
        assert len(said) >= 1, (task, lines)
        if spec.run_unit is None:
            assert said == [f"spare-gen: questions {task.value}: {said[0].split(': ')[2].split()[0]} models "
                            f"(no per-model work)"], said
        else:
            assert said[-1].split(": ")[2].split()[0].split("/")[0] == said[-1].split(": ")[2].split()[0].split("/")[1]
    assert not any(line.startswith("spare-gen: questions_") for line in lines), lines


def _run_on_a_terminal(args: list[str], timeout: float = 600) -> tuple[int, str]:
    """``python -m spare_gen.cli ARGS`` with stdout and stderr on a pseudo-terminal of 120 columns (so its progress is
    tqdm's bar): the exit code and everything it wrote, each carriage return made a new line."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a new pty is 0 columns wide
    proc = subprocess.Popen([*CLI, *args], stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, cwd=REPO,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    os.close(follower)
    said = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other end closed: the command ended
            break
        if not chunk:
            break
        said += chunk
    os.close(leader)
    return proc.wait(timeout=60), said.decode(errors="replace").replace("\r", "\n")


def test_a_sharded_stage_bar_moves_per_unit_on_a_terminal_before_its_shard_ends(tmp_path):
    """The drawings of 12 models in one shard: the terminal's bar shows counts between 0 and 12 (told by the worker
    per unit), not only 0/12 then 12/12; the same run without progress writes the same bytes."""
    import hashlib

    common = ["run", "--stages", "models,drawings", "--workers", "1", "--set", "models.csg.count=12",
              "--set", "runner.shard_units=12", "--set", "runner.dashboard=false"]
    code, said = _run_on_a_terminal([*common, "--out", str(tmp_path / "bar")])
    assert code == 0, said
    counts = [int(m.group(1)) for m in re.finditer(r"^drawings: +\d+%\|[^|]*\| *(\d+)/12 ", said, re.MULTILINE)]
    assert counts and counts[-1] == 12, said
    assert [c for c in counts if 0 < c < 12], said  # the one shard had not ended yet
    assert len(list((tmp_path / "bar" / "drawings.parquet").glob("part-*.parquet"))) == 1  # one shard indeed
    quiet = spare_gen_cli(*common, "--no-progress", "--out", str(tmp_path / "quiet"))
    assert quiet.returncode == 0, quiet.stderr

    def digests(out: Path) -> dict[str, str]:
        return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(out.rglob("*")) if p.is_file()
                and not p.relative_to(out).as_posix().startswith(SAID_OF_A_RUN)}

    assert digests(tmp_path / "bar") == digests(tmp_path / "quiet")


# what a run says of itself (times, the command, the ledger's file times): not output bytes
SAID_OF_A_RUN = ("run.json", "timings/", ".units/written.json")
