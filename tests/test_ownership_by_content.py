"""spare_gen owns a file only while it holds the bytes spare_gen wrote, in every folder; validate covers all of it.

Real runs through the command line (small CSG counts), real files, a real FIFO (``os.mkfifo``): a user's files in
``.units/<stage>/``, ``timings/<stage>/`` and inside a table folder survive a shrinking rerun and are listed; a user's
Parquet file is never read as a table; a generated file the user edited is kept; what spare_gen's own later commands
write (train-baseline, the Figure 6 pipeline, export, cache, show) is recorded, never called foreign, and checked by validate; a FIFO never
hangs validate; a stray dot file and an edited ledger are caught; an older spare_gen's ledger is adopted once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spare_gen.store import ownership, shards
from spare_gen.store.manifest import LEDGER_KEY, PROVENANCE_KEY, provenance_hash
from spare_gen.validate import validate
from tests.conftest import REPO, differing_files, spare_gen_cli

QUIET = ["--no-progress", "--set", "runner.dashboard=false", "--workers", "1"]
KEPT = "are not spare_gen's or were changed: kept"


def _run(out: Path, count: int, stages: str, cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    proc = spare_gen_cli("run", "--out", str(out), "--set", f"models.csg.count={count}", "--stages", stages, *QUIET,
                         *extra, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc


def _validate(out: Path) -> subprocess.CompletedProcess:
    """``spare-gen validate`` as a user runs it, stopped if it takes over two minutes (a hang fails the test)."""
    return spare_gen_cli("validate", str(out), timeout=120)


def _put(out: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)


def _strays(stdout: str) -> list[str]:
    return sorted(line.split()[1] for line in stdout.splitlines() if line.startswith("stray:"))


def test_user_files_in_units_timings_and_a_table_folder_survive_a_shrinking_rerun_and_are_listed(tmp_path):
    out = tmp_path / "u"
    _run(out, 3, "models,drawings", tmp_path)
    part = next((out / "models.parquet").glob("part-*.parquet")).read_bytes()
    user = {
        ".units/models/mine.json": b"{}\n",
        ".units/drawings/notes.txt": b"notes\n",
        "timings/drawings/mine.json": b"{}\n",
        "timings/models/part-00000-00000000.json": b"{}\n",  # spare_gen's naming, the user's file
        "models.parquet/part-mine.parquet": part,  # a real Parquet part, the user's copy
        "models.parquet/.n.tmp": b"tmp\n",
        "views.parquet/.x.tmp": b"tmp\n",
    }
    _put(out, user)
    drawings = sorted((out / "drawings" / "csg_000002").iterdir())
    edited = drawings[0].relative_to(out).as_posix()
    (out / edited).write_bytes((out / edited).read_bytes() + b"<!-- the user's edit -->")
    edited_bytes = (out / edited).read_bytes()

    second = _run(out, 2, "models,drawings", tmp_path)  # csg_000002 is no longer asked for
    assert all((out / rel).read_bytes() == data for rel, data in user.items())
    assert (out / edited).read_bytes() == edited_bytes
    removed = json.loads((out / "run.json").read_text())["removed"]
    assert not set(removed) & {*user, edited}
    assert {d.relative_to(out).as_posix() for d in drawings[1:]} <= set(removed)  # spare_gen's own, unchanged: gone
    assert not any((out / d.relative_to(out)).exists() for d in drawings[1:])
    assert f"{len(user) + 1} file(s) in {out} {KEPT}" in second.stderr
    assert shards.num_rows(out / "models.parquet") == 2  # the user's part is never read as rows of the table
    assert len(shards.read(out / "models.parquet", ["model_id"])) == 2

    proc = _validate(out)
    assert proc.returncode == 1
    assert _strays(proc.stdout) == sorted(user)
    assert f"files: {edited} changed since spare_gen wrote it" in proc.stdout


def test_a_users_parquet_file_is_never_read_as_a_table_and_the_files_it_names_stay(tmp_path):
    out = tmp_path / "p"
    _run(out, 2, "models,drawings", tmp_path)
    picture = b"the user's picture"
    user = {"drawings/extra/mine.png": picture, "notes.parquet": b"hi"}  # a text file with a Parquet name too
    _put(out, user)
    pq.write_table(pa.table({"path": ["drawings/extra/mine.png"], "sha256": [hashlib.sha256(picture).hexdigest()]}),
                   out / "mine.parquet")
    tables = json.loads((out / "dataset.json").read_text())["tables"]

    second = _run(out, 1, "models,drawings", tmp_path)  # work to do, a clean-up after it
    assert "Parquet file size" not in second.stderr
    assert {rel.split("/")[0] for rel in json.loads((out / "dataset.json").read_text())["tables"]} == \
        {rel.split("/")[0] for rel in tables} == {"models.parquet", "views.parquet", "drawings.parquet"}
    assert "drawings/extra/mine.png" not in ownership.read(out)
    (out / "mine.parquet").unlink()  # nothing names the picture now: still not spare_gen's to remove
    _run(out, 2, "models,drawings", tmp_path)
    assert (out / "drawings/extra/mine.png").read_bytes() == picture
    proc = _validate(out)
    assert proc.returncode == 1 and _strays(proc.stdout) == sorted(user)


# enough pose_to_isometric questions for a question in each split (train-baseline validates on val)
COMMAND_COUNTS = ("questions.counts={three_view_to_isometric=2, isometric_to_pose=2, pose_to_isometric=12, "
                  "isometric_view_generation=2, point_cloud_generation=2}")
FULL = ["-c", str(REPO / "configs" / "default.toml"), *QUIET, "--set", "models.csg.count=24",
        "--set", "questions.allow_fewer=true", "--set", COMMAND_COUNTS]


def test_what_spare_gens_own_commands_write_into_a_dataset_is_recorded_never_foreign_and_validated(tmp_path):
    pytest.importorskip("torch")  # train-baseline and cache need the optional torch extra (installed in CI)
    out = tmp_path / "d"
    proc = spare_gen_cli("run", "--out", str(out), *FULL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    task = "pose_to_isometric"
    commands = [
        ["train-baseline", str(out), "--task", task, "--epochs", "1", "--size", "16", "--no-progress"],
        ["export", str(out), "--task", task, "--split", "test", "--size", "16"],
        ["cache", str(out), "--task", task, "--split", "test", "--size", "16",
         "--export", str(out / "caches" / "{task}-{split}.xz")],
        ["show", str(out), "--n", "2"],
    ]
    for args in commands:
        proc = spare_gen_cli(*args, cwd=tmp_path, timeout=900)
        assert proc.returncode == 0, (args[0], proc.stderr)
    figure6 = subprocess.run([sys.executable, str(REPO / "pipelines" / "reproduce_spare3d_figure6.py"), "--dataset",
                              str(out), "--cells", f"{task}:binary", "--archs", "bagnet33", "--size", "36",
                              "--epochs", "1", "--batch-size", "4", "--device", "cpu", "--no-blank"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert figure6.returncode == 0, figure6.stderr[-3000:]
    written = {rel for rel in ownership.read(out)
               if rel.startswith(("baselines/", "exports/", "caches/", "show/", "figure6/"))}
    assert {"show/index.html", f"exports/{task}_test_16.npz", "figure6/figure6.json", "figure6/figure6.pdf"} <= written
    assert any(rel.startswith(f"baselines/{task}/") for rel in written)
    assert any(rel.startswith("caches/") for rel in written)
    assert _validate(out).returncode == 0

    (out / "README.md").unlink()  # a rerun with work to do, and a clean-up after it
    proc = spare_gen_cli("run", "--out", str(out), *FULL, cwd=tmp_path)
    assert proc.returncode == 0 and "nothing to do" not in proc.stderr, proc.stderr
    assert KEPT not in proc.stderr and "removed" not in proc.stderr
    assert all((out / rel).is_file() for rel in written)
    assert _validate(out).returncode == 0

    # trained again after the rerun (dataset.json now records the curve's hash too): still valid
    proc = spare_gen_cli(*commands[0], cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert _validate(out).returncode == 0

    curve = next(rel for rel in sorted(written) if rel.endswith(".pdf"))
    (out / curve).write_bytes((out / curve).read_bytes() + b"%edited")
    proc = _validate(out)
    assert proc.returncode == 1 and f"files: {curve} changed" in proc.stdout, proc.stdout


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("small") / "out"
    _run(out, 2, "models,drawings", out.parent)
    assert validate(out) == []
    return out


def _copy(small: Path, dest: Path) -> Path:
    shutil.copytree(small, dest, symlinks=True)
    return dest


def test_a_fifo_anywhere_never_hangs_validate_and_is_listed(small, tmp_path):
    out = _copy(small, tmp_path / "f")
    drawing = sorted(p for p in (out / "drawings").rglob("*.png"))[0]
    drawing.unlink()
    part = sorted((out / "models.parquet").glob("part-*.parquet"))[0]
    part.unlink()
    fifos = ["x.parquet", "models.parquet/part-00009-deadbeef.parquet", ".units/models/x.json", "questions/q.parquet"]
    for rel in fifos:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(out / rel)
    os.mkfifo(drawing)  # where a table names a drawing
    os.mkfifo(part)  # where dataset.json records a table part
    proc = _validate(out)  # a hang is a timeout: the test fails
    assert proc.returncode == 1
    for rel in fifos:
        assert f"stray: {rel} is not spare_gen's: it is a FIFO (never opened" in proc.stdout, (rel, proc.stdout)
    rel = drawing.relative_to(out).as_posix()
    assert f"files: {rel} (named in views.parquet" in proc.stdout and "is a FIFO, not a file (never opened)" in \
        proc.stdout
    assert f"files: table {part.relative_to(out).as_posix()} is listed in dataset.json but is a FIFO" in proc.stdout


def test_stray_files_anywhere_dot_files_and_folders_included_give_exit_1(small, tmp_path):
    cases = {".hidden": b"x", ".cache/blob": b"x", "reports/mine.txt": b"x", "timings/mine.json": b"{}",
             ".units/drawings/mine.json": b"{}", "views.parquet/_notes.txt": b"x", "drawings/.sketch.png": b"x"}
    for rel, data in cases.items():
        out = _copy(small, tmp_path / rel.replace("/", "_"))
        _put(out, {rel: data})
        proc = _validate(out)
        assert proc.returncode == 1 and _strays(proc.stdout) == [rel], (rel, proc.stdout)
        assert (out / rel).read_bytes() == data  # listed, never removed


def test_an_edit_to_the_ledger_is_caught_by_validate(small, tmp_path):
    def edited(name: str, change) -> subprocess.CompletedProcess:
        out = _copy(small, tmp_path / name)
        ledger = json.loads((out / ownership.LEDGER).read_text())
        change(ledger["files"])
        (out / ownership.LEDGER).write_text(json.dumps(ledger))
        return _validate(out)

    def claim_a_users_file(files: dict) -> None:
        files["mine.txt"] = [1, 0, hashlib.sha256(b"x").hexdigest()]

    def rehash(prefix: str):
        return lambda files: files[next(rel for rel in sorted(files) if rel.startswith(prefix))].__setitem__(
            2, "0" * 64)

    cases = {"dropped": lambda files: files.pop(next(rel for rel in sorted(files) if rel.startswith("drawings/"))),
             "claimed": claim_a_users_file, "rehashed": rehash("models/")}
    for name, change in cases.items():
        proc = edited(name, change)
        assert proc.returncode == 1, (name, proc.stdout)
        assert f"files: {ownership.LEDGER} was edited since spare_gen wrote it" in proc.stdout, (name, proc.stdout)
    # bookkeeping's records (whose bytes and names dataset.json cannot fix): the files no longer match them
    proc = edited("bookkeeping", rehash("timings/"))
    assert proc.returncode == 1 and "changed since spare_gen wrote it" in proc.stdout, proc.stdout
    proc = edited("bookkeeping_dropped", lambda files: files.pop(sorted(files)[0]))
    assert proc.returncode == 1 and _strays(proc.stdout) == [sorted(ownership.read(small))[0]], proc.stdout


def test_raters_answers_are_peoples_data_listed_in_a_note_not_a_problem(small, tmp_path):
    out = _copy(small, tmp_path / "a")
    _put(out, {"annotations/alice.csv": b"pair_id,choice\n", "quiz/untrained/answers/bob.csv": b"q,a\n"})
    proc = _validate(out)
    assert proc.returncode == 0, proc.stdout
    assert "note: annotations/alice.csv is people's data" in proc.stdout
    assert "note: quiz/untrained/answers/bob.csv is people's data" in proc.stdout


def test_an_older_spare_gens_output_is_adopted_once_and_then_is_nothing_to_do(small, tmp_path):
    out = _copy(small, tmp_path / "old")
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    # the ledger and dataset.json as spare_gen before ownership by content wrote them: paths only, no digest
    paths = sorted(rel for rel in ownership.read(out) if not rel.startswith((".", "timings/")))
    (out / ownership.LEDGER).write_text(json.dumps({"files": paths}, indent=2, sort_keys=True) + "\n")
    record = json.loads((out / "dataset.json").read_text())
    record.pop(LEDGER_KEY)
    record.pop(PROVENANCE_KEY)
    (out / "dataset.json").write_text(json.dumps({**record, PROVENANCE_KEY: provenance_hash(record)}, indent=2,
                                                 sort_keys=True) + "\n")
    assert ownership.is_old(out)

    first = _run(out, 2, "models,drawings", tmp_path)
    assert "nothing to do" in first.stderr and "adopted " in first.stderr and "hashed once" in first.stderr
    assert not ownership.is_old(out)
    assert _validate(out).returncode == 0
    assert differing_files(small, out, ignore=("dataset.json",)) == []
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} == set(before)
    second = _run(out, 2, "models,drawings", tmp_path)
    assert "nothing to do" in second.stderr and "adopted" not in second.stderr
