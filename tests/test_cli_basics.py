"""The CLI behaves like its peers: --version, config errors before any work, --set blamed, help with formats, export."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, spare_gen_cli, without_torch_env
from synthetic_dataset import make_dataset

from spare_gen import __version__
from spare_gen.cli import COMMANDS, build_parser, main


def test_version_prints_the_package_version():
    done = spare_gen_cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"spare-gen {__version__}"


def test_bad_split_fails_before_any_work(tmp_path):
    out = tmp_path / "out"
    done = spare_gen_cli("run", "--out", str(out), "--set", "questions.split=[0.5,0.5,0.5]", timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "--set questions.split=[0.5,0.5,0.5]" in lines[0] and "sum to 1" in lines[0]
    assert not out.exists()  # no cluster, no model: nothing was written
    assert "Dask" not in done.stderr


@pytest.mark.parametrize("split", ["[-0.1,0.6,0.5]", "[0,0.5,0.5]"])
def test_other_bad_splits_are_config_errors(split, capsys):
    assert main(["config", "--set", f"questions.split={split}"]) == 2
    assert f"--set questions.split={split}" in capsys.readouterr().err


def test_set_errors_name_the_set_argument_not_the_file(capsys):
    assert main(["config", "-c", "configs/default.toml", "--set", "render.size=abc"]) == 2
    err = capsys.readouterr().err
    assert "config error in --set render.size=abc: render.size = 'abc'" in err
    assert main(["config", "-c", "configs/default.toml", "--set", "questions.enabled=maybe"]) == 2
    assert "--set questions.enabled=maybe" in capsys.readouterr().err
    # a bad value in the file itself still names the file
    assert main(["config", "-c", "configs/abc.toml", "--set", 'models.files.root=""']) == 2
    assert "--set models.files.root=\"\"" in capsys.readouterr().err


def test_every_subcommand_documents_its_input_with_an_example():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name, parser in sub.choices.items():
        text = parser.format_help()
        assert "input:" in text or "input: " in text or "PRED.csv" in text, name
        assert "e.g." in text or "Example" in text, name
    assert "question_id,answer" in sub.choices["evaluate"].format_help()
    assert "r00,r01,r02" in sub.choices["evaluate-poses"].format_help()
    assert "pair_id,rater_id,choice" in sub.choices["rank"].format_help()
    assert "exit codes" in sub.choices["audit"].format_help() and "not audited" in sub.choices["audit"].format_help()


def test_export_subcommand_writes_the_npz(tmp_path, capsys):
    out = make_dataset(tmp_path / "out", split_sizes={"train": 8, "val": 4, "test": 4})
    assert main(["export", str(out), "--task", "pose_to_isometric", "--split", "test", "--size", "16"]) == 0
    path = out / "exports" / "pose_to_isometric_test_16.npz"
    with np.load(path) as z:
        assert z["candidates"].shape == (4, 4, 16, 16, 3) and z["answer"].shape == (4,)
    assert str(path) in capsys.readouterr().out
    assert main(["export", str(out), "--task", "pose_to_isometric", "--split", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


# every command's --help in one interpreter (one start-up instead of one per command), as `main` runs them
EVERY_HELP = """
import contextlib, io, sys
from spare_gen.cli import COMMANDS, main
for name in COMMANDS:
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        try:
            main([name, "--help"])
        except SystemExit as exc:
            assert exc.code == 0, (name, exc.code)
    assert text.getvalue().startswith(f"usage: spare-gen {name} "), name
print(len(COMMANDS), "torch" in sys.modules)
"""


def test_help_version_and_a_bare_command_work_on_the_base_install_without_torch(python_without_torch):
    """`spare-gen --help`, every command's --help, --version and a bare `spare-gen` in a venv with no torch."""
    cli = [str(python_without_torch), "-m", "spare_gen"]
    for args in (["--help"], ["--version"], []):
        done = subprocess.run([*cli, *args], cwd=REPO, capture_output=True, text=True, timeout=120,
                              env=without_torch_env())
        assert done.returncode == 0 and done.stderr == "", (args, done.stderr)
        if args == ["--version"]:
            assert done.stdout == f"spare-gen {__version__}\n"
        else:  # the bare command shows the help: every command and what it does
            assert done.stdout.startswith("usage: spare-gen") and all(name in done.stdout for name in COMMANDS)
    every = subprocess.run([str(python_without_torch), "-c", EVERY_HELP], cwd=REPO, capture_output=True, text=True,
                           timeout=300, env=without_torch_env())
    assert every.returncode == 0 and every.stdout == f"{len(COMMANDS)} False\n", every.stderr


# `spare-gen ARGS` in a fresh interpreter, as a user types it (python -m spare_gen): which of the heavy packages
# named after ARGS were imported by the time it exits (written to stderr at exit, after everything the command did)
HEAVY_AT_EXIT = """
import atexit, runpy, sys
args, heavy = sys.argv[1].split(), sys.argv[2:]
atexit.register(lambda: print("heavy:", *(m for m in heavy if m in sys.modules), file=sys.stderr))
sys.argv = ["spare-gen", *args]
runpy.run_module("spare_gen", run_name="__main__", alter_sys=True)
"""
HEAVY = ("torch", "dask", "distributed", "OCP", "numpy", "pyarrow", "pandas", "scipy", "PIL", "matplotlib", "sklearn")


@pytest.mark.parametrize("args", [f"{name} --help" for name in COMMANDS] + ["--help", "--version", ""])
def test_every_help_imports_none_of_the_heavy_packages_in_a_venv_without_torch(python_without_torch, args):
    done = subprocess.run([str(python_without_torch), "-c", HEAVY_AT_EXIT, args, *HEAVY], cwd=REPO,
                          capture_output=True, text=True, timeout=120, env=without_torch_env())
    assert done.returncode == 0 and done.stdout.startswith(("usage: spare-gen", "spare-gen ")), (args, done.stderr)
    assert done.stderr == "heavy:\n", (args, done.stderr)


def test_the_heavy_package_check_sees_a_package_that_a_command_imports(python_without_torch):
    done = subprocess.run([str(python_without_torch), "-c", "import numpy\n" + HEAVY_AT_EXIT, "--version", *HEAVY],
                          cwd=REPO, capture_output=True, text=True, timeout=120, env=without_torch_env())
    assert done.returncode == 0 and done.stderr == "heavy: numpy\n", done.stderr


@pytest.mark.parametrize("command", ["cache", "train-baseline"])
def test_a_command_that_needs_torch_says_so_in_one_line_when_it_runs_without_torch(python_without_torch, command,
                                                                                   tmp_path):
    out = make_dataset(tmp_path / "out", split_sizes={"train": 4, "val": 2, "test": 2})
    done = subprocess.run([str(python_without_torch), "-m", "spare_gen", command, str(out), "--task",
                           "pose_to_isometric"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=without_torch_env())
    assert done.returncode == 2
    assert done.stderr == (f"spare-gen {command}: needs the optional dependency 'torch': "
                           'pip install -e ".[torch]" (in the repository)\n')
