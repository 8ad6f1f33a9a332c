"""A folder of CAD files with odd entries beside valid ones: every entry a row with one line, the run exits 0."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spare_gen.stages.models.driver import model_units
from spare_gen.stages.models.settings import ModelSettings
from spare_gen.stages.models.worker import model_task
from spare_gen.config import load_config
from tests.conftest import REPO, spare_gen_cli

VALID = ["io1-ug-214.stp", "bug3883_xr2-ct-214_l-bracket.stp"]


@pytest.fixture
def public_tmp():
    """A temporary folder an ordinary user can enter (pytest's own is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="spare_gen-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _odd_folder(base: Path, real_cad: Path) -> Path:
    """Valid files from shared/cad beside a link loop, a dangling link, a FIFO, a device, links reaching
    files and folders twice, a link to a folder outside, a folder named like a CAD file, a link to a file outside
    that is no CAD file, and a folder no ordinary user can read."""
    folder = base / "cad"
    (folder / "sub").mkdir(parents=True)
    (base / "outside").mkdir()
    shutil.copy(real_cad / VALID[0], folder / VALID[0])
    shutil.copy(real_cad / VALID[1], folder / "sub" / VALID[1])
    shutil.copy(real_cad / "ANC101.stp", base / "outside" / "ANC101.stp")
    (folder / "a.step").symlink_to("b.step")
    (folder / "b.step").symlink_to("a.step")
    (folder / "dangling.step").symlink_to("nowhere.step")
    os.mkfifo(folder / "pipe.step")  # opening it for reading would wait forever
    (folder / "zero.step").symlink_to("/dev/zero")  # reading it would never end
    (folder / "again-io1.step").symlink_to(VALID[0])
    (folder / "again-sub").symlink_to("sub")
    (folder / "self").symlink_to(".")
    (folder / "outside").symlink_to("../outside")
    (folder / "dir.step").mkdir()  # a folder named like a CAD file (issue 50)
    (folder / "x.step").symlink_to("/etc/passwd")  # a link to a file that is no CAD file, outside the folder
    (folder / "locked").mkdir()
    shutil.copy(real_cad / "red_cube_blue_cylinder.step", folder / "locked" / "hidden.step")
    (folder / "locked").chmod(0)
    for p in (base, base / "outside", folder, folder / "sub"):
        p.chmod(0o755)
    for p in [*folder.rglob("*.st*"), base / "outside" / "ANC101.stp"]:
        if p.is_file() and not p.is_symlink() and "locked" not in p.parts:
            p.chmod(0o644)
    return folder


def test_a_folder_of_odd_entries_beside_valid_files_gives_one_row_each_and_exit_0(public_tmp, real_cad):
    folder = _odd_folder(public_tmp, real_cad)
    out = public_tmp / "out"
    proc = spare_gen_cli("run", "--stages", "models", "--out", str(out), "--no-progress",
                         "--set", 'models.source="files"', "--set", f'models.files.root="{folder}"',
                         "--set", "runner.dashboard=false", "--set", "runner.workers=1", cwd=public_tmp)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = {r["model_id"]: r for r in pq.read_table(out / "models.parquet").to_pylist()}
    for mid in ("io1-ug-214", "sub__bug3883_xr2-ct-214_l-bracket", "outside__ANC101"):
        assert rows[mid]["status"] == "ok", rows[mid]["error"]
    expected = {
        "a": ("failed", "a.step: symbolic link loop (a.step -> b.step -> a.step), cannot be read"),
        "b": ("failed", "b.step: symbolic link loop (b.step -> a.step -> b.step), cannot be read"),
        "dangling": ("failed", "dangling.step: dangling symbolic link to 'nowhere.step' (the target does not exist)"),
        "pipe": ("failed", "pipe.step: a named pipe (FIFO), not a regular file; not read"),
        "zero": ("failed", "zero.step: a device file (a symbolic link to '/dev/zero'), not a regular file; not read"),
        "dir": ("failed", "dir.step: a folder, not a regular file; not read"),
        # the link's own name on its row, the file it reaches named in its error
        "x": ("failed", "CadReadError: x.step: not a STEP file (no ISO-10303-21 header in the first 8192 bytes); "
                        "x.step is a symbolic link to '/etc/passwd'"),
        "again-io1": ("skipped", "again-io1.step: the same file as io1-ug-214 (reached through a link), kept once"),
        "again-sub": ("skipped", "again-sub: link to the folder sub, whose files are listed there"),
        "self": ("skipped", "self: link to the root folder, whose files are listed there"),
    }
    for mid, (status, error) in expected.items():
        assert (rows[mid]["status"], rows[mid]["error"]) == (status, error)
    assert rows["x"]["source_path"] == str(folder / "x.step") and rows["dir"]["source_path"] == str(folder / "dir.step")
    assert rows["again-io1"]["source_path"] == str(folder / "again-io1.step")
    if os.geteuid() == 0:  # root reads the locked folder: its file is a row like any other (next test: nobody)
        assert rows["locked__hidden"]["status"] == "ok"
        assert "models: failed 7, ok 4, skipped 3" in proc.stderr
    else:
        assert rows["locked"]["status"] == "failed" and "folder cannot be read" in rows["locked"]["error"]
        assert "models: failed 8, ok 3, skipped 3" in proc.stderr
    assert len(rows) == 3 + len(expected) + 1
    assert all("\n" not in (r["error"] or "") for r in rows.values())


def test_an_unreadable_subfolder_is_a_failed_row_for_an_ordinary_user(public_tmp, real_cad):
    """Root reads any folder, so the listing runs as the ordinary user ``nobody`` (setpriv)."""
    folder = _odd_folder(public_tmp, real_cad)
    script = (
        "from spare_gen.stages.models.driver import model_units\n"
        "from spare_gen.config import load_config\n"
        f"cfg = load_config(None, ['models.source=\"files\"', 'models.files.root=\"{folder}\"'])\n"
        "for u in model_units(cfg):\n"
        "    print(u['model_id'], '|', u.get('error', ''))\n"
    )
    proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                           sys.executable, "-c", script], cwd=public_tmp, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" | ") for line in proc.stdout.splitlines())
    assert lines["locked"] == "locked: folder cannot be read (Permission denied); its files are not listed"
    assert "locked__hidden" not in lines
    assert lines["io1-ug-214"] == ""


def test_a_file_that_vanishes_after_the_listing_is_a_failed_row(public_tmp, real_cad):
    folder = public_tmp / "cad"
    folder.mkdir()
    for name in VALID:
        shutil.copy(real_cad / name, folder / name)
    cfg = load_config(None, ['models.source="files"', f'models.files.root="{folder}"', f'out="{public_tmp / "o"}"'])
    units = {u["model_id"]: u for u in model_units(cfg)}
    (folder / VALID[0]).unlink()  # gone between the listing and the read
    row = model_task(units["io1-ug-214"], ModelSettings.from_config(cfg, public_tmp / "o")).row
    assert row.status == "failed"
    assert row.error == f"CadReadError: {folder / VALID[0]}: file does not exist"


def _not_utf8_folder(base: Path, real_cad: Path) -> Path:
    """Real files whose names are bytes that are not UTF-8 (a Latin-1 é, a stray 0xff), beside a valid name: a STEP
    and a BREP that read, a file that is not CAD, and a folder whose name is not UTF-8 either."""
    folder = base / "cad"
    folder.mkdir()
    raw = os.fsencode(folder)
    shutil.copy(real_cad / "io1-ug-214.stp", folder / "ok.step")
    shutil.copy(real_cad / "bug3883_xr2-ct-214_l-bracket.stp", os.fsdecode(raw + b"/caf\xe9.step"))
    os.mkdir(raw + b"/d\xe9")
    shutil.copy(real_cad / "sheet_metal_54.brep", os.fsdecode(raw + b"/d\xe9/sheet\xe9.brep"))
    with open(raw + b"/bad\xff.step", "wb") as fh:
        fh.write(b"not a STEP file\n")
    return folder


def test_file_names_that_are_not_utf8_are_rows_with_the_name_escaped_and_the_run_and_its_rerun_exit_0(tmp_path,
                                                                                                      real_cad):
    folder = _not_utf8_folder(tmp_path, real_cad)
    out = tmp_path / "out"
    args = ("run", "--stages", "models", "--out", str(out), "--no-progress", "--set", 'models.source="files"',
            "--set", f'models.files.root="{folder}"', "--set", "runner.dashboard=false", "--set", "runner.workers=1")
    proc = spare_gen_cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "because of the machine" not in proc.stderr
    rows = {r["model_id"]: r for r in pq.read_table(out / "models.parquet").to_pylist()}
    assert {mid: (r["status"], r["source_path"]) for mid, r in rows.items()} == {
        "ok": ("ok", f"{folder}/ok.step"),  # an ordinary name: unchanged
        "caf": ("ok", f"{folder}/caf\\xe9.step"),  # read through OCCT although OCCT cannot open that name
        "d___sheet": ("ok", f"{folder}/d\\xe9/sheet\\xe9.brep"),
        "bad": ("failed", f"{folder}/bad\\xff.step"),
    }
    assert rows["bad"]["error"] == ("CadReadError: bad\\xff.step: not a STEP file (no ISO-10303-21 header in the "
                                    "first 8192 bytes)")
    assert rows["caf"]["n_faces"] > 0 and (out / rows["caf"]["brep_path"]).is_file()
    assert "models: failed 1, ok 3" in proc.stderr
    rerun = spare_gen_cli(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert "nothing to do" in rerun.stderr


def test_a_list_file_naming_a_file_whose_name_is_not_utf8_lists_it(tmp_path, real_cad):
    folder = _not_utf8_folder(tmp_path, real_cad)
    listing = tmp_path / "files.txt"
    listing.write_bytes(b"# the two names that are not UTF-8\ncaf\xe9.step\nd\xe9/sheet\xe9.brep\n")
    cfg = load_config(None, ['models.source="files"', f'models.files.root="{folder}"',
                             f'models.files.list_file="{listing}"'])
    units = {u["model_id"]: u for u in model_units(cfg)}
    assert sorted(units) == ["caf", "d___sheet"]
    assert all(u["sha256"] and not u.get("error") for u in units.values())
    assert os.fsencode(units["caf"]["source_path"]).endswith(b"/caf\xe9.step")


def test_folders_named_like_cad_files_are_failed_rows_and_the_files_inside_them_are_still_listed(tmp_path, real_cad):
    folder = tmp_path / "cad"
    (folder / "nested.step").mkdir(parents=True)
    shutil.copy(real_cad / VALID[0], folder / "nested.step" / VALID[0])
    (tmp_path / "elsewhere.stp").mkdir()
    (folder / "linked.stp").symlink_to(tmp_path / "elsewhere.stp")  # a link to a folder named like a CAD file
    cfg = load_config(None, ['models.source="files"', f'models.files.root="{folder}"'])
    units = {u["model_id"]: u for u in model_units(cfg)}
    assert units["nested"]["error"] == "nested.step: a folder, not a regular file; not read"
    assert units["linked"]["error"] == (f"linked.stp: a folder (a symbolic link to '{tmp_path / 'elsewhere.stp'}'), "
                                        "not a regular file; not read")
    assert units["linked"]["source_path"] == str(folder / "linked.stp")
    inner = units["nested.step__io1-ug-214"]
    assert "error" not in inner and inner["sha256"] and inner["source_path"] == str(folder / "nested.step" / VALID[0])
    assert len(units) == 3
