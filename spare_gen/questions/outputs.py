"""Output file and folder names of the question stage, declared once (relative to the dataset root)."""

from __future__ import annotations

from pathlib import Path

QUESTIONS_DIR = "questions"
MANIFEST_NAME = "files.parquet"
SUMMARY_NAME = "summary.json"
TIMINGS_NAME = "timings.json"
CUT_VIEWS_NAME = "cut_views.parquet"
CUTS_DIR = f"{QUESTIONS_DIR}/cuts"  # cut objects (STEP) and their drawings, one folder per model
# where cut-set units write them (resume state, like the unit files): only those a question uses are
# published to CUTS_DIR (spare_gen.questions.per_question_files.publish_staged)
STAGED_CUTS_DIR = ".units/cut_files"
PREVIEW_DIR = "preview"  # contact sheets <task>.png


def split_path(out: Path, task: str, split: str) -> Path:
    """``<out>/questions/<task>/<split>.parquet``."""
    return Path(out) / QUESTIONS_DIR / task / f"{split}.parquet"


FILE_SOURCES_NAME = "file_sources.parquet"  # per-question file -> the drawing it copies


def question_files_dir(task: str) -> str:
    """Folder of a task's per-question file copies (content-named), relative to the dataset root."""
    return f"{QUESTIONS_DIR}/{task}/files"
