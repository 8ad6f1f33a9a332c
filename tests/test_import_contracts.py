"""The import-linter contracts in .importlinter: layers (cad lowest), "OCP only in spare_gen/cad/", and the layers
inside spare_gen.stages.questions (stage above task rules above shared declarations)."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}  # one report line per import
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)


def _copy_packages(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in ("spare_gen",):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / ".importlinter", root / ".importlinter")
    return root


def test_contracts_hold_on_the_package():
    result = _lint(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


def test_ocp_import_outside_cad_breaks_the_contract(tmp_path):
    root = _copy_packages(tmp_path)
    (root / "spare_gen" / "stages" / "questions" / "uses_occt.py").write_text(
        '"""A deliberate violation."""\n\n\ndef volume(shape):\n    from OCP.GProp import GProp_GProps\n\n'
        '    return GProp_GProps()\n')
    result = _lint(root)
    assert result.returncode != 0
    assert "OCP (OpenCASCADE) is imported only inside spare_gen.cad BROKEN" in result.stdout
    assert "spare_gen.stages.questions.uses_occt -> OCP (l.5)" in result.stdout


def test_a_new_package_that_imports_ocp_breaks_the_contract_without_being_listed(tmp_path):
    """The OCP contract names only spare_gen.cad: a package that did not exist when it was written is covered."""
    root = _copy_packages(tmp_path)
    (root / "spare_gen" / "brand_new").mkdir()
    (root / "spare_gen" / "brand_new" / "__init__.py").write_text(
        '"""A deliberate violation in a new package."""\n\nfrom OCP.gp import gp_Pnt\n\nORIGIN = gp_Pnt\n')
    result = _lint(root)
    assert result.returncode != 0
    assert "OCP (OpenCASCADE) is imported only inside spare_gen.cad BROKEN" in result.stdout
    assert "spare_gen.brand_new -> OCP (l.3)" in result.stdout


def test_cad_importing_a_higher_layer_breaks_the_layers(tmp_path):
    root = _copy_packages(tmp_path)
    path = root / "spare_gen" / "cad" / "props.py"
    path.write_text(path.read_text() + "\n\ndef _kinds():\n    from spare_gen.rating.corruptions import SEVERITIES\n\n"
                    "    return SEVERITIES\n")
    result = _lint(root)
    assert result.returncode != 0
    assert "spare_gen.cad is not allowed to import spare_gen.rating" in result.stdout


def test_every_layer_is_one_package_or_independent_siblings():
    """No ':' in the layers: packages that share a layer may not import each other ('|'), so no cycle hides there."""
    config = configparser.ConfigParser()
    config.read(REPO / ".importlinter")
    layers = [line.strip() for line in config["importlinter:contract:layers"]["layers"].splitlines() if line.strip()]
    assert layers and not [line for line in layers if ":" in line]



def test_a_task_rule_importing_the_question_stage_breaks_the_questions_layers(tmp_path):
    root = _copy_packages(tmp_path)
    path = root / "spare_gen" / "stages" / "questions" / "tasks" / "isometric_view_generation.py"
    path.write_text(path.read_text() + "\n\ndef _advice():\n    from spare_gen.stages.questions.assembly.plan import ADVICE\n\n"
                    "    return ADVICE\n")
    result = _lint(root)
    assert result.returncode != 0
    assert "spare_gen.stages.questions.tasks is not allowed to import spare_gen.stages.questions.assembly" in result.stdout
