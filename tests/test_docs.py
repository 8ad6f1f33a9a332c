"""The documentation: the site builds strictly, its commands exist in the CLI, and it reads as docs, not a run log."""

from __future__ import annotations

import argparse
import html
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from spare_gen.cli import build_parser
from spare_gen.config.schema import Config
from spare_gen.stages.models.schema import MODELS_SCHEMA
from spare_gen.stages.pool.schema import CORRUPTIONS_SCHEMA

REPO = Path(__file__).resolve().parents[1]
PROGRAM = "spare-gen"
SHELL_OPERATORS = {"&&", "||", "|", ";", ">", ">>", "<", "&", "2>", "2>&1"}
FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
INLINE = re.compile(r"`([^`\n]+)`")
FLAG = re.compile(r"^(--?[A-Za-z][\w-]*)(?:=.*)?$")
# What a reader must not find in user-facing text: traces of how and when it was measured, not what it does.
RUN_LOG_WORDS = {
    "a session": re.compile(r"\bsessions?\b", re.IGNORECASE),
    "a load average": re.compile(r"\bload averages?\b", re.IGNORECASE),
    "a date of a run": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
    "an unmet target": re.compile(r"\bnot met\b|\bunmet\b|\btarget\s*[:=]?\s*\d", re.IGNORECASE),
    "a time of day": re.compile(r"\b(yesterday|this (morning|afternoon|evening)|tonight)\b", re.IGNORECASE),
}


def user_facing_files() -> list[Path]:
    """README, every page of the docs, the speed table."""
    return [REPO / "README.md", REPO / "benchmarks" / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def command_lines(markdown: str) -> list[str]:
    """Every command line shown in fenced code blocks (continuations joined, comments dropped) and inline code."""
    lines = []
    for block in FENCED.findall(markdown):
        lines += block.replace("\\\n", " ").splitlines()
    lines += INLINE.findall(FENCED.sub("", markdown))
    return [line for line in lines if PROGRAM in line]


def _tokens(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote in prose-like inline code
        return line.split()


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def cli_problems(markdown: str, parser: argparse.ArgumentParser, where: str = "text") -> list[str]:
    """One line per ``spare-gen`` subcommand or flag shown in ``markdown`` that the parser does not have."""
    subcommands = _subcommands(parser)
    problems = []
    for line in command_lines(markdown):
        tokens = _tokens(line)
        for start, token in enumerate(tokens):
            if not token.endswith(PROGRAM):
                continue
            args = []
            for t in tokens[start + 1:]:
                if t in SHELL_OPERATORS or t.endswith(PROGRAM):
                    break
                args.append(t.strip("[](),.").removesuffix("..."))
            command = next((a for a in args if a and not a.startswith("-")), None)
            target = parser
            if command is not None:
                if command not in subcommands:
                    problems.append(f"{where}: unknown subcommand {command!r} in: {line.strip()}")
                    continue
                target = subcommands[command]
            for arg in args:
                match = FLAG.match(arg)
                if match and match.group(1) not in target._option_string_actions:
                    problems.append(f"{where}: {PROGRAM} {command or ''}: unknown flag {match.group(1)!r} in: "
                                    f"{line.strip()}")
    return problems


def run_log_problems(text: str, where: str = "text") -> list[str]:
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in RUN_LOG_WORDS.items():
            if pattern.search(line):
                problems.append(f"{where}:{number}: {what}: {line.strip()}")
    return problems


# mkdocs in a Python where OCP cannot be imported: the hook and the API reference must not need OpenCASCADE.
MKDOCS_WITHOUT_OCP = """
import sys
class NoOCP:
    def find_spec(self, name, path=None, target=None):
        if name == "OCP" or name.startswith("OCP."):
            raise ImportError("OCP is not importable while the docs build")
sys.meta_path.insert(0, NoOCP())
from mkdocs.__main__ import cli
cli(prog_name="mkdocs")
"""


def build_site(config: Path, dest: Path, cwd: Path, python: Path | str = sys.executable) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` without OCP (never with -q: a quiet build drops the warnings strict mode counts)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run([str(python), "-c", MKDOCS_WITHOUT_OCP, "build", "--strict", "-f", str(config),
                           "-d", str(dest)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _config_keys(model, prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
            keys += _config_keys(annotation, f"{prefix}{name}.")
        else:
            keys.append(f"{prefix}{name}")
    return keys


def _page_text(site: Path, page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", (site / page / "index.html").read_text()))


@pytest.fixture(scope="module")
def site(tmp_path_factory, python_without_torch) -> Path:
    """The site, built as on the base install: in a venv without torch (and without OCP)."""
    dest = tmp_path_factory.mktemp("site")
    done = build_site(REPO / "mkdocs.yml", dest, REPO, python_without_torch)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return dest


def test_the_site_builds_strictly_without_ocp_or_torch_and_its_tables_come_from_the_declared_schemas(site):
    formats = _page_text(site, "guide/output-formats")
    for name in MODELS_SCHEMA.names + CORRUPTIONS_SCHEMA.names:
        assert name in formats, f"column {name} missing from the output formats page"
    configs = _page_text(site, "guide/configs")
    for key in _config_keys(Config):
        assert key in configs, f"config key {key} missing from the configs page"
    commands = _page_text(site, "guide/commands")
    for name, subparser in _subcommands(build_parser()).items():
        assert f"spare-gen {name}" in commands
        for option in subparser._option_string_actions:
            assert option in commands, f"spare-gen {name} {option} missing from the commands page"
    reference = _page_text(site, "reference/metrics")
    assert "evaluate_all" in reference and "Metrics comparing a predicted wireframe" in reference


def test_the_built_pages_read_as_documentation_not_as_a_run_log(site):
    problems = []
    for page in sorted(site.rglob("index.html")):
        if "changelog" in page.parts:  # a history by version and date, on purpose
            continue
        text = html.unescape(re.sub(r"<[^>]+>", " ", page.read_text()))
        problems += run_log_problems(text, str(page.relative_to(site)))
    assert problems == []


def _small_site(tmp_path: Path, page: str, nav: list) -> Path:
    """A copy of the real site's configuration over one planted page."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(page)
    config.update(docs_dir=str(docs), nav=nav, hooks=[str(REPO / "docs" / "hooks.py")], exclude_docs="")
    config["plugins"] = ["search"]
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_planted_broken_link_fails_the_strict_build(tmp_path):
    config = _small_site(tmp_path, "# Home\n\nSee [the guide](guide/nowhere.md).\n", ["index.md"])
    done = build_site(config, tmp_path / "site", tmp_path)
    assert done.returncode != 0 and "guide/nowhere.md" in done.stdout + done.stderr


def test_a_missing_page_in_the_navigation_fails_the_strict_build(tmp_path):
    config = _small_site(tmp_path, "# Home\n", ["index.md", {"Gone": "gone.md"}])
    done = build_site(config, tmp_path / "site", tmp_path)
    assert done.returncode != 0 and "gone.md" in done.stdout + done.stderr


def test_a_planted_unknown_table_fails_the_build_with_one_line_naming_it(tmp_path):
    config = _small_site(tmp_path, "# Home\n\n<!-- generated: arrow spare_gen.stages.models.schema:NO_SUCH_SCHEMA -->\n",
                         ["index.md"])
    done = build_site(config, tmp_path / "site", tmp_path)
    assert done.returncode != 0 and "NO_SUCH_SCHEMA" in done.stdout + done.stderr


def test_every_command_and_flag_shown_in_the_readme_and_docs_exists():
    parser = build_parser()
    shown = set()
    problems = []
    for path in user_facing_files():
        text = path.read_text()
        problems += cli_problems(text, parser, str(path.relative_to(REPO)))
        for line in command_lines(text):
            tokens = _tokens(line)
            shown |= {b for a, b in zip(tokens, tokens[1:]) if a.endswith(PROGRAM)}
    assert problems == []
    assert set(_subcommands(parser)) <= shown, f"subcommands nowhere in the docs: {set(_subcommands(parser)) - shown}"


def test_the_docs_check_fails_on_a_planted_unknown_flag_and_subcommand():
    planted = ("# Usage\n\n```bash\nspare-gen run --out /tmp/x \\\n  --no-such-flag 3   # a comment --not-a-flag\n```\n\n"
               "Then `spare-gen frobnicate OUT` and `spare-gen rank OUT ANSWERS [--item type|variant]`.\n")
    problems = cli_problems(planted, build_parser(), "planted.md")
    assert len(problems) == 2
    assert "unknown flag '--no-such-flag'" in problems[0] and "spare-gen run" in problems[0]
    assert "unknown subcommand 'frobnicate'" in problems[1]


def test_no_user_facing_text_mentions_sessions_run_dates_load_averages_or_unmet_targets():
    problems = []
    for path in user_facing_files():
        problems += run_log_problems(path.read_text(), str(path.relative_to(REPO)))
    assert problems == []


def test_the_run_log_check_flags_each_kind_of_trace_it_looks_for():
    planted = ("Measured in the fourth session.\nLoad average 0.8 at start.\nRun on 2026-11-23.\n"
               "Ratio 1.41 (target 1.3: not met).\nMeasured this afternoon.\nSame bytes on any machine.\n")
    problems = run_log_problems(planted, "planted.md")
    assert [p.split(":")[1] for p in problems] == ["1", "2", "3", "4", "5"]


def test_the_readme_is_short_and_keeps_the_two_commands_of_ci():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    assert "\nbash .ci/run\n" in readme
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/spare-gen run" in readme
    assert "../shared" not in readme


def test_the_readme_names_every_system_package_its_test_command_installs_and_ci_run_ends_in_the_suite():
    ci = (REPO / ".ci" / "run").read_text()
    installed = {word for line in ci.splitlines() if line.strip().startswith("apt_install ")
                 for word in line.split()[1:]}
    assert installed == {"libcairo2", "chromium", "chromium-driver", "slurm-wlm"}
    readme = " ".join((REPO / "README.md").read_text().split())
    assert all(f"`{package}`" in readme for package in installed)
    suite = ci.strip().splitlines()[-1]  # the venv and the suite: the README shows the same command
    assert suite.startswith("python3 -m venv .venv") and f"`{suite}`" in readme
    assert ci.strip().splitlines()[-1].endswith("-m pytest -q -p no:cacheprovider -n 2 --dist loadfile tests")


def test_a_page_that_needs_opencascade_fails_the_build_so_the_real_one_does_not(tmp_path):
    config = _small_site(tmp_path, "# Home\n\n<!-- generated: enum spare_gen.cad.compat:NO_SUCH_NAME -->\n",
                         ["index.md"])
    done = build_site(config, tmp_path / "site", tmp_path)
    assert done.returncode != 0 and "OCP is not importable" in done.stdout + done.stderr


def test_every_relative_link_in_the_readme_and_changelog_points_to_a_file_of_the_repository():
    broken = []
    for name in ("README.md", "CHANGELOG.md", "benchmarks/README.md"):
        path = REPO / name
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if re.match(r"[a-z]+://", target):
                continue
            if not (path.parent / target.split("#")[0]).exists():
                broken.append(f"{name}: {target}")
    assert broken == []
