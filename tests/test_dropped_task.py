"""A task no longer asked for: its question files and its Hugging Face copies go (spare_gen's own, unchanged), a
user's file beside them stays, and the dataset validates."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import spare_gen_cli

QUICK = ["--no-progress", "--workers", "1", "--set", "runner.dashboard=false", "--set", "pool.enabled=false",
         "--set", "models.csg.count=6", "--set", "questions.allow_fewer=true"]


def _counts(pose_to_isometric: int) -> list[str]:
    return ["--set", "questions.counts={point_cloud_generation = 0, three_view_to_isometric = 0, isometric_to_pose = 0, "
                     f"pose_to_isometric = {pose_to_isometric}, isometric_view_generation = 3}}"]


def test_a_task_dropped_on_a_rerun_leaves_no_hugging_face_copy_and_keeps_a_users_file(tmp_path):
    out = tmp_path / "out"
    first = spare_gen_cli("run", "--out", str(out), *QUICK, *_counts(3), timeout=900)
    assert first.returncode == 0, first.stderr
    hf = out / "hf" / "pose_to_isometric"
    assert (hf / "train.parquet").is_file() and (out / "questions" / "pose_to_isometric").is_dir()
    mine = hf / "notes.txt"
    mine.write_text("a user's note\n")
    again = spare_gen_cli("run", "--out", str(out), *QUICK, *_counts(0), timeout=900)
    assert again.returncode == 0, again.stderr
    assert not (out / "questions" / "pose_to_isometric").exists()
    assert sorted(p.name for p in hf.iterdir()) == ["notes.txt"]  # spare_gen's copies gone, the user's file kept
    assert mine.read_text() == "a user's note\n"
    assert (out / "hf" / "isometric_view_generation" / "train.parquet").is_file()
    check = spare_gen_cli("validate", str(out), timeout=900)
    problems = [line for line in (check.stdout + check.stderr).splitlines() if not line.startswith("spare-gen")]
    assert check.returncode == 1 and len(problems) == 1, check.stderr
    assert "hf/pose_to_isometric/notes.txt is not spare_gen's" in problems[0]  # the only problem: the user's file
    mine.unlink()
    check = spare_gen_cli("validate", str(out), timeout=900)
    assert check.returncode == 0, check.stdout + check.stderr
