"""Files questions name: answer-side copies named by their content, and the manifest of every referenced file.

Content names (issue 15), so no path, file name or file order tells the answer.

A pose drawing is ``drawings/<model>/<pose>.png``: its name is the pose. A question's answer-side drawings
(pose tasks) are therefore byte copies under ``questions/<task>/files/<sha256 prefix>.<ext>``, with the
source of each copy in ``questions/file_sources.parquet``; cut objects are content-named where they are
written. Every such file gets one fixed modification time, so the write order (which follows the
answer order) cannot be read from the file system either.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any, Iterable, TypeVar

from spare_gen.atomic import write_bytes
from spare_gen.filehash import sha256_file
from spare_gen.store import ownership
from spare_gen.store.packed import drawing_bytes, packed_bytes
from spare_gen.stages.questions.schema import (
    CUTS_DIR, STAGED_CUTS_DIR, ManifestRow, QuestionCommon, content_name, question_files_dir, settle,
)
from spare_gen.runner.stage import is_number_list

Q = TypeVar("Q", bound=QuestionCommon)


def copy_to_content_name(out: Path, rel: str, folder: str) -> str:
    """Copy ``out/rel`` (a file, or a drawing packed in the views table) atomically to its content name inside
    ``folder``; the new path."""
    data = drawing_bytes(out, rel)
    new_rel = f"{folder}/{content_name(data, Path(rel).suffix)}"
    target = Path(out) / new_rel
    if not (target.is_file() and target.read_bytes() == data):
        write_bytes(target, data)
    settle(target)
    return new_rel


def publish_answer_files(out: Path, task: str, rows: list[Q], columns: tuple[str, ...],
                         sources: dict[str, str]) -> list[Q]:
    """``rows`` with every path in ``columns`` (single paths or lists) replaced by a content-named copy.

    ``sources`` (copy -> original) is filled in place.
    """
    folder = question_files_dir(task)

    def copy(rel):
        if rel is None:
            return None
        new_rel = copy_to_content_name(out, rel, folder)
        sources[new_rel] = rel
        return new_rel

    published = []
    for row in rows:
        copies: dict[str, Any] = {}
        for col in columns:
            value = getattr(row, col)
            copies[col] = [copy(p) for p in value] if isinstance(value, (list, tuple)) else copy(value)
        published.append(dataclasses.replace(row, **copies))
    return published


def remove_unlisted(out: Path, task: str, keep: set[str]) -> list[str]:
    """Delete the files of the task's copy folder that no question names and that spare_gen wrote (left by an
    earlier run; ``spare_gen.store.ownership``); return them."""
    folder = Path(out) / question_files_dir(task)
    if not folder.is_dir():
        return []
    return ownership.remove(out, [f"{question_files_dir(task)}/{path.name}" for path in sorted(folder.iterdir())
                                  if f"{question_files_dir(task)}/{path.name}" not in keep])


def dataset_sha256(out: Path, rel: str) -> str | None:
    """SHA-256 of ``rel`` under ``out``: a drawing packed in the views table, else the file; None if neither."""
    packed = packed_bytes(out, rel)
    if packed is not None:
        return hashlib.sha256(packed).hexdigest()
    full = Path(out) / rel
    return sha256_file(full) if full.is_file() else None


def manifest_rows(out: Path, paths: Iterable[str]) -> list[ManifestRow]:
    """The manifest rows (path, sha256, bytes) of ``paths`` (distinct, in the order given); runs on a Dask worker
    as well."""
    rows = []
    for rel in paths:
        full = out / rel
        packed = packed_bytes(out, rel)  # a drawing in the views table (render.store = "parquet")
        if packed is not None:
            rows.append(ManifestRow(path=rel, sha256=hashlib.sha256(packed).hexdigest(), bytes=len(packed)))
            continue
        if not full.is_file():
            raise FileNotFoundError(f"a question references {rel!r}, which does not exist under {out}")
        rows.append(ManifestRow(path=rel, sha256=sha256_file(full), bytes=full.stat().st_size))
    return rows


def publish_staged(out: Path, result):
    """``result`` (a unit's result: dicts and lists) with every staged cut file (``STAGED_CUTS_DIR``) published
    to ``CUTS_DIR`` and named there; a published file that exists already is left as it is (its name is its
    content), so only files a question uses are ever written to the dataset, each once."""
    if isinstance(result, dict):
        return {k: publish_staged(out, v) for k, v in result.items()}
    if isinstance(result, list):
        if is_number_list(result):  # polylines, points: no paths inside
            return result
        return [publish_staged(out, v) for v in result]
    if isinstance(result, str) and result.startswith(f"{STAGED_CUTS_DIR}/"):
        rel = f"{CUTS_DIR}/{result.removeprefix(f'{STAGED_CUTS_DIR}/')}"
        target = Path(out) / rel
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(Path(out) / result, target)  # same bytes, same fixed time, no copy
            except FileExistsError:
                pass
            except OSError:  # a file system without hard links
                tmp = target.with_name(f".{target.name}.tmp")
                shutil.copy2(Path(out) / result, tmp)
                os.replace(tmp, target)
        return rel
    return result
