"""The audit looks beyond pixels: a planted cut0-style path leak is flagged, random names are within chance,
and a probe that cannot run is "not audited" (exit code 3), never "within chance"."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from synthetic_dataset import make_dataset

from spare_gen.jobs.stages import audit_line
from spare_gen.audit.probes import EXIT_NOT_AUDITED, audit
from spare_gen.audit.report import AuditReport
from spare_gen.audit.surface import ANSWER_KEY_METADATA, TokenLookup, answer_key_columns, tokens
from spare_gen.cli import main as cli_main
from spare_gen.stages.questions.schema import split_path
from spare_gen.stages.questions.tasks import question_schema
from spare_gen.stages.questions.tasks import SPLITS
from spare_gen.rng import derive_rng

MC_TASKS = ("three_view_to_isometric", "isometric_to_pose", "pose_to_isometric")
SURFACE_PROBES = ("paths", "file_order")
CANDIDATE_COLUMNS = ("candidate_png", "candidate_svg", "candidate_step")
ISO_COLUMNS = ("iso_png", "iso_svg")


def test_tokens_split_paths_at_separators_and_digit_runs():
    assert tokens("questions/cuts/csg_000109/drawings/cut0/2.png") == {
        "questions", "cuts", "csg", "109", "drawings", "cut0", "cut", "0", "2", "png"}
    assert tokens(["a-b", 3.0, None]) == {"a", "b", "3"}


def test_the_metadata_probe_leaves_out_the_answer_and_the_answer_keys_each_task_row_declares():
    assert answer_key_columns(question_schema("pose_to_isometric"), "pose_to_isometric") == [
        "answer", "candidate_poses"]
    assert answer_key_columns(question_schema("three_view_to_isometric"), "three_view_to_isometric") == [
        "answer", "candidate_cuts"]
    assert answer_key_columns(question_schema("isometric_to_pose"), "isometric_to_pose") == ["answer"]
    # a table of another origin can flag a column itself, in its Arrow field metadata
    schema = question_schema("isometric_to_pose").append(
        pa.field("pose_order", pa.list_(pa.int32()), metadata={ANSWER_KEY_METADATA: b"true"}))
    assert answer_key_columns(schema, "isometric_to_pose") == ["answer", "pose_order"]


def test_token_lookup_learns_a_token_on_the_answer_and_ignores_position_only_tokens():
    rng = derive_rng(0, "test", "lookup")
    y = rng.permutation(np.arange(80) % 4)
    x = np.empty((80, 4), dtype=object)
    for i in range(80):
        for k in range(4):
            x[i, k] = frozenset({f"pos{k}", f"q{i}"} | ({"cut0"} if k == y[i] else {"cut1"}))
    lookup = TokenLookup().fit(x[:60], y[:60])
    assert lookup.weights["cut0"] > 1.0 and lookup.weights["cut1"] < 0
    assert abs(lookup.weights["pos2"]) < 1e-9  # seen exactly as often as answer frequencies predict
    assert (lookup.predict(x[60:], rng) == y[60:]).all()


def _copy_questions(src: Path, dest: Path) -> Path:
    """A copy of a dataset's question tables and the files they name (views.parquet and drawings linked)."""
    dest.mkdir(parents=True)
    shutil.copytree(src / "questions", dest / "questions")
    for name in ("drawings", "views.parquet", "questions_unused"):
        if (src / name).exists():
            (dest / name).symlink_to(src / name)
    return dest


def _rewrite(out: Path, task: str, rename) -> None:
    """Rewrite every split of ``task``: ``rename(row, column, k_or_None, old_path) -> new path`` (files copied).

    The vector tables (views.parquet, questions/cut_views.parquet) follow the renamed SVG paths.
    """
    moved: dict[str, str] = {}
    for split in SPLITS:
        path = split_path(out, task, split)
        if not path.is_file():
            continue
        table = pq.read_table(path)
        rows = table.to_pylist()
        for row in rows:
            for col in CANDIDATE_COLUMNS + ISO_COLUMNS:
                if row.get(col) is None:
                    continue
                if isinstance(row[col], list):
                    row[col] = [_move(out, p, rename(row, col, k, p), moved) for k, p in enumerate(row[col])]
                else:
                    row[col] = _move(out, row[col], rename(row, col, None, row[col]), moved)
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    sources_path = out / "questions" / "file_sources.parquet"  # per-question copies -> their drawing-stage source
    if sources_path.exists():
        sources = {r["path"]: r["source"] for r in pq.read_table(sources_path).to_pylist()}
        sources.update({new: sources[old] for old, new in moved.items() if old in sources})
        rows = [{"path": k, "source": v} for k, v in sorted(sources.items())]
        pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(sources_path)), sources_path)
    for vectors in (out / "views.parquet", out / "questions" / "cut_views.parquet"):
        if not vectors.exists():
            continue
        table = pq.read_table(vectors)
        svg = [moved.get(p, p) for p in table.column("svg").to_pylist()]
        table = table.set_column(table.schema.get_field_index("svg"), "svg", pa.array(svg, pa.string()))
        vectors.unlink()  # views.parquet may be a link to the source dataset
        pq.write_table(table, vectors)



def _move(out: Path, old: str, new: str, moved: dict | None = None) -> str:
    (out / new).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile((out / old).resolve(), out / new)
    if moved is not None:
        moved[old] = new
    return new


def _random_names(out: Path) -> None:
    """Every answer-side file gets a per-question random name (derived RNG) in its own folder."""
    for task in MC_TASKS:
        def rename(row, col, k, old):
            rng = derive_rng(0, "test", "rename", row["question_id"], col.split("_")[0], -1 if k is None else k)
            return f"renamed/{row['question_id']}/{rng.bytes(6).hex()}{Path(old).suffix}"
        _rewrite(out, task, rename)


def _plant_cut0(out: Path) -> None:
    """Every candidate task names the answer's files .../cut0/... and the others cut1..3 (the old naming)."""
    for task in ("three_view_to_isometric", "pose_to_isometric"):
        def rename(row, col, k, old):
            others = [j for j in range(4) if j != row["answer"]]
            cut = 0 if k == row["answer"] else 1 + others.index(k)
            return f"planted/{row['question_id']}/cut{cut}/{Path(old).name}"
        _rewrite(out, task, rename)


@pytest.fixture(scope="module")
def renamed(tiny_dataset, tmp_path_factory):
    out = _copy_questions(tiny_dataset, tmp_path_factory.mktemp("renamed") / "out")
    _random_names(out)
    return out


def test_random_names_leave_paths_and_order_within_chance(renamed):
    report = audit(renamed)
    by = {(r["task"], r["probe"]): r for r in report.results}
    for task in MC_TASKS:
        for probe in SURFACE_PROBES:
            assert by[(task, probe)]["verdict"] == "within_chance", (task, probe, by[(task, probe)]["evaluations"])
    assert report.not_audited == [] and report.empty_splits == []


def test_planted_cut0_naming_is_flagged(renamed, tmp_path, capsys):
    planted = _copy_questions(renamed, tmp_path / "planted")
    shutil.rmtree(planted / "questions")
    shutil.copytree(renamed / "questions", planted / "questions")
    (planted / "renamed").symlink_to(renamed / "renamed")
    _plant_cut0(planted)
    assert cli_main(["audit", str(planted)]) == 1
    captured = capsys.readouterr()
    report = AuditReport.read(planted / "reports" / "audit.json")
    by = {(r["task"], r["probe"]): r for r in report.results}
    for task in ("three_view_to_isometric", "pose_to_isometric"):
        assert by[(task, "paths")]["verdict"] == "above_chance"
        assert by[(task, "paths")]["evaluations"]["cv"]["accuracy"] >= 0.9
    assert "three_view_to_isometric/paths" in captured.out and "NOT within chance" in captured.out
    assert "Not within chance:" in (planted / "README.md").read_text()


def test_an_empty_split_is_not_audited_with_its_own_exit_code(tmp_path, capsys):
    out = make_dataset(tmp_path / "out", split_sizes={"train": 24, "val": 4, "test": 8})
    split_path(out, "pose_to_isometric", "test").unlink()  # the question stage writes no file for an empty split
    assert cli_main(["audit", str(out)]) == EXIT_NOT_AUDITED == 3
    captured = capsys.readouterr()
    assert "1 EMPTY split(s), so every probe that needs one is not audited: pose_to_isometric/test" in captured.err
    assert "NOT AUDITED" in captured.out and "pose_to_isometric/line_stats" in captured.out
    assert sum("NOT AUDITED" in line for line in captured.err.splitlines()) == 1  # said once, with its count
    assert "within chance" not in captured.out.split("NOT AUDITED")[1].split(";")[0]
    report = AuditReport.read(out / "reports" / "audit.json")
    verdicts = {(r["task"], r["probe"]): r["verdict"] for r in report.results}
    assert verdicts[("pose_to_isometric", "answer_position")] == "not_audited"  # it has only the test evaluation
    assert verdicts[("pose_to_isometric", "line_stats")] == "not_audited"  # the test evaluation could not run
    assert report.empty_splits == ["pose_to_isometric/test"]
    card = (out / "README.md").read_text()
    assert "**Not audited" in card and "`pose_to_isometric/test`" in card
    assert "Every probe ran and is within chance" not in card
    assert "Found: " in card and "not audited (pose_to_isometric/" in card and "the widest is [" in card
    line = audit_line(out, 0)  # what `spare-gen run` prints after the question stage
    assert line.startswith("audit: WARNING: ") and "NOT AUDITED" in line and "EMPTY SPLITS: pose_to_isometric/test" in line


def test_too_few_questions_are_not_audited(tmp_path, capsys):
    out = make_dataset(tmp_path / "out", split_sizes={"train": 4, "val": 1, "test": 2})
    assert cli_main(["audit", str(out)]) == 3
    report = AuditReport.read(out / "reports" / "audit.json")
    assert {r["verdict"] for r in report.results} == {"not_audited"}
    out_text = capsys.readouterr().out
    assert "audit: none of the 21 question-blind probes could run (too little data); NOT AUDITED" in out_text
    assert "within chance" not in out_text.split("NOT AUDITED")[0]
