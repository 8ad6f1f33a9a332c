"""The dataset as the validator loads it, and the lookups every task's validator rule shares."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence, overload

from spare_gen.config.schema import TaskName
from spare_gen.stages.drawings.schema import DrawingRow
from spare_gen.stages.questions.near_duplicate import Drawing, near_duplicate
from spare_gen.stages.questions.schema import THREE_VIEW_PREFIXES, QuestionCommon


@dataclass
class LoadedDataset:
    """A question dataset as loaded by the validator."""

    out: Path
    summary: dict
    rows: dict[str, dict[str, list[QuestionCommon]]]  # task -> split -> rows (each task's row class)
    manifest: dict[str, str]  # path -> recorded sha256
    drawings: dict[str, DrawingRow]  # model_id -> drawings.parquet row (its flags and scale)
    n_primitives: dict[str, int | None]  # model_id -> models.parquet n_primitives
    views: dict[str, dict[str, dict]]  # model_id -> view -> views row (svg, png, visible, hidden)
    cut_views: dict[str, dict]  # svg path -> cut_views row
    by_svg: dict[str, dict] = field(default_factory=dict)  # svg path -> views or cut_views row (vectors)
    actual_sha: dict[str, str] = field(default_factory=dict)  # filled by check_files
    aliases: dict[str, str] = field(default_factory=dict)  # per-question file name -> the drawing it copies

    @overload
    def source(self, path: str) -> str: ...
    @overload
    def source(self, path: None) -> None: ...
    def source(self, path: str | None) -> str | None:
        """The drawing-stage (or cut-object) file a question's file copies; the path itself if it is one."""
        if path is None:  # a question without that file: no drawing it copies
            return None
        return self.aliases.get(path, path)

    def all_rows(self) -> Iterator[tuple[TaskName, str, QuestionCommon]]:
        for task, splits in self.rows.items():
            for split, rows in splits.items():
                for r in rows:
                    yield TaskName(task), split, r


def question_id(row: QuestionCommon) -> str:
    return "?" if row.question_id is None else row.question_id


def recorded_drawing(ds: LoadedDataset, svg: str | None, png: str | None) -> Drawing | None:
    """The recorded vectors of ``svg`` with the PNG's actual hash (None if no vectors are recorded, or no ``svg``)."""
    if svg is None:
        return None
    row = ds.by_svg.get(ds.source(svg))
    if row is None:
        return None
    vectors = Drawing.from_view(row)
    return Drawing(vectors.visible, vectors.hidden, ds.actual_sha.get(png or "") or row.get("png_sha256") or "")


def distinct_candidates(ds: LoadedDataset, row: QuestionCommon, svgs: Sequence[str | None],
                        pngs: Sequence[str | None], tol: float | None) -> list[str]:
    """Rule 3: no candidate file named twice, no two candidates the same drawing; every candidate has vectors.

    ``tol`` None: only identical PNGs count as the same (the original SPARE3D cutters' acceptance).
    """
    bad = []
    given_pngs = [p for p in pngs if p]
    if len(set(svgs)) < len(svgs) or len(set(given_pngs)) < len(given_pngs):
        return [f"candidates: {question_id(row)} names the same candidate file twice"]
    drawings = [recorded_drawing(ds, s, p) for s, p in zip(svgs, pngs)]
    for i, j in itertools.combinations(range(len(svgs)), 2):
        a, b = drawings[i], drawings[j]
        if a is None or b is None:
            continue
        if a.png_sha256 and a.png_sha256 == b.png_sha256:
            bad.append(f"candidates: {question_id(row)}: candidates {i} and {j} are identical PNGs")
        elif tol is not None and near_duplicate(a, b, tol):
            bad.append(f"candidates: {question_id(row)}: candidates {i} and {j} are the same drawing within {tol} px")
    missing = [s for s, d in zip(svgs, drawings) if d is None]
    if missing:
        bad.append(f"candidates: {question_id(row)}: no vector drawing recorded for {missing[0]!r}")
    return bad


def model_view(ds: LoadedDataset, mid: str, view: str, kind: str) -> str | None:
    """The drawing-stage path of a model's view (``kind`` svg or png)."""
    return ds.views.get(mid, {}).get(view, {}).get(kind)


def is_model_view(ds: LoadedDataset, path: str | None, mid: str, view: str) -> bool:
    """Whether a question's SVG ``path`` is (a per-question copy of) the model's ``view`` drawing."""
    return path is not None and ds.source(path) == model_view(ds, mid, view, "svg")


def check_model_three_views(ds: LoadedDataset, row: QuestionCommon) -> list[str]:
    """The F, R, T inputs are the model's own f, r, t drawings."""
    return [f"candidates: {question_id(row)}: {THREE_VIEW_PREFIXES[v]} drawing is not the model's {v!r} view"
            for v, svg in row.three_views("svg").items() if not is_model_view(ds, svg, str(row.model_id), v)]
