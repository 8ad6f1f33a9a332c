"""A rerun of a complete output does nothing, and cut sets write no dataset file for candidates no question uses."""

from __future__ import annotations

import json
import os
import shutil
from importlib.metadata import version
from pathlib import Path

from drawings_shapes import HOLED_BOX, render_config, write_model
from spare_gen.jobs.regenerate import STAGE_NAMES, nothing_to_do, work_reason
from spare_gen.config import load_config
from spare_gen.config.schema import TaskName
from spare_gen.stages.drawings.child import draw_model
from spare_gen.stages.questions.publish.files import publish_staged
from spare_gen.stages.questions.schema import CUTS_DIR, STAGED_CUTS_DIR
from spare_gen.stages.questions.tasks import question_settings
from spare_gen.stages.questions.tasks.three_view_to_isometric import run_unit
from spare_gen.runner.isolation import worker_executor
from spare_gen.runner.stage import output_files
from tests.conftest import REPO, spare_gen_cli


def _snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """(inode, size, mtime in ns) of every file and folder under ``root``, bookkeeping included: a rewrite
    (atomic replace: a new inode), an edit (mtime) or a removal shows."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            st = path.lstat()
            found[path.relative_to(root).as_posix()] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def test_a_cut_set_writes_nothing_into_the_dataset_until_a_question_uses_it(tmp_path):
    path = write_model(HOLED_BOX, tmp_path, "holed_box")
    drawing = draw_model("holed_box", path, str(tmp_path / "drawn"), render_config(), None, "exact")
    unit = {"unit_id": "holed_box", "task": TaskName.THREE_VIEW_TO_ISOMETRIC.value, "model_id": "holed_box",
            "shape_path": path, "hlr_method": "exact",
            "framing": {"scale": drawing["model"]["scale"], "center": list(drawing["model"]["center"])}}
    out = tmp_path / "out"
    settings = question_settings(load_config(None, []), out, TaskName.THREE_VIEW_TO_ISOMETRIC)
    try:
        result = run_unit(unit, settings).record()  # as its unit file stores it
    finally:
        worker_executor().close()
    assert result["accepted"], result
    staged = output_files(result)
    assert len(staged) == 4 + 2 * (3 + 4)  # 4 STEP files; SVG + PNG of F, R, T and of the 4 candidates
    assert all(p.startswith(f"{STAGED_CUTS_DIR}/holed_box/") and (out / p).is_file() for p in staged)
    assert not (out / CUTS_DIR).exists()  # the unit alone puts nothing into the dataset

    published = publish_staged(out, result)  # what the driver does for a cut set a question uses
    names = output_files(published)
    assert names == [p.replace(STAGED_CUTS_DIR, CUTS_DIR, 1) for p in staged]
    assert all((out / n).read_bytes() == (out / s).read_bytes() for n, s in zip(names, staged))
    before = _snapshot(out / CUTS_DIR)
    assert publish_staged(out, result) == published and _snapshot(out / CUTS_DIR) == before  # nothing rewritten


def test_rerunning_the_default_job_into_its_complete_output_does_nothing(small_dataset, tmp_path):
    out = tmp_path / "default"
    shutil.copytree(small_dataset, out, symlinks=True)  # copy2: times kept; the copy is what the rerun sees
    before = _snapshot(out)
    proc = spare_gen_cli("run", "--config", str(REPO / "configs" / "default.toml"), "--out", str(out),
                         "--no-progress", "--set", "runner.dashboard=false", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [f"spare-gen: config {REPO / 'configs' / 'default.toml'}",
                     f"spare-gen: nothing to do: {out} is complete for this config"], lines
    assert _snapshot(out) == before  # no unit redone, no file written, replaced or removed, bookkeeping included


def test_a_run_of_some_stages_with_other_settings_leaves_the_rest_to_do(small_dataset, tmp_path):
    """dataset.json keeps older runs' stage summaries: only the stages the last run ran count as done."""
    out = tmp_path / "default"
    shutil.copytree(small_dataset, out, symlinks=True)
    other = ["--set", "render.size=128", "--set", "runner.dashboard=false"]
    proc = spare_gen_cli("run", "--config", str(REPO / "configs" / "default.toml"), "--out", str(out),
                         "--no-progress", "--stages", "models", *other, cwd=tmp_path)
    assert proc.returncode == 0 and "nothing to do" not in proc.stderr, proc.stderr
    assert (f"spare-gen: {out}: settings changed: render.size 200 -> 128: recomputing what that changes, reusing the "
            f"rest") in proc.stderr.splitlines()
    config = load_config(REPO / "configs" / "default.toml", [f'out="{out}"', "render.size=128"])
    assert nothing_to_do(config, out, ("models",))
    assert not nothing_to_do(config, out, STAGE_NAMES)  # the drawings on record are of render.size = 200


def test_what_a_rerun_would_recompute_for_is_named_and_another_dask_alone_is_no_reason(small_dataset, tmp_path):
    out = tmp_path / "default"
    shutil.copytree(small_dataset, out, symlinks=True)
    config = load_config(REPO / "configs" / "default.toml", [f'out="{out}"'])
    assert work_reason(config, out, STAGE_NAMES) is None
    manifest = out / "dataset.json"
    record = json.loads(manifest.read_text())

    def made_with(**versions: str) -> None:  # the record of a run made with these versions
        manifest.write_text(json.dumps({**record, "versions": {**record["versions"], **versions}}))

    made_with(dask="2020.1.0", distributed="2020.1.0")  # they schedule the work, the bytes are the same
    assert work_reason(config, out, STAGE_NAMES) is None
    made_with(numpy="1.0.0", dask="2020.1.0")
    assert work_reason(config, out, STAGE_NAMES) == f"numpy 1.0.0 -> {version('numpy')}"
    made_with()
    fewer = load_config(REPO / "configs" / "default.toml", [f'out="{out}"', "models.csg.count=200", "seed=3"])
    assert work_reason(fewer, out, STAGE_NAMES) == "settings changed: models.csg.count 240 -> 200, seed 0 -> 3"
    (out / "README.md").unlink()
    assert work_reason(config, out, STAGE_NAMES) == "1 file(s) it wrote are missing (e.g. README.md)"
