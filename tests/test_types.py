"""The type checker (mypy, configured in pyproject.toml's [tool.mypy]) passes on the typed packages: the runner, the
store, the stages, the rows and the jobs. Run here, so the test command and CI run it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _mypy(root: Path, cache: Path, *files: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), *files], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900)


def test_the_typed_packages_pass_the_type_checker(tmp_path):
    result = _mypy(REPO, tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_a_row_read_with_a_wrong_type_fails_the_type_checker(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REPO / "spare_gen", root / "spare_gen", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    schema = root / "spare_gen" / "stages" / "models" / "schema.py"
    schema.write_text(schema.read_text() + '\n\ndef primitives(row: ModelRow) -> str:\n    return row.n_primitives\n')
    result = _mypy(root, tmp_path / "cache", "spare_gen/stages/models/schema.py")
    assert result.returncode == 1
    assert 'schema.py:' in result.stdout and 'got "int | None", expected "str"' in result.stdout, result.stdout


def test_a_unit_key_a_stage_does_not_declare_fails_the_type_checker(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REPO / "spare_gen", root / "spare_gen", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    child = root / "spare_gen" / "stages" / "drawings" / "child.py"
    text = child.read_text()
    assert 'unit["deflection_factor"]' in text
    child.write_text(text.replace('unit["deflection_factor"]', 'unit["deflection"]', 1))  # a misspelt key
    result = _mypy(root, tmp_path / "cache", "spare_gen/stages/drawings/child.py")
    assert result.returncode == 1
    assert 'child.py:' in result.stdout and '"DrawAttempt" has no key "deflection"' in result.stdout, result.stdout
