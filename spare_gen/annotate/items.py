"""What the browser may see of a pair: geometry and overlay pictures, never ids, kinds or severities.

Reads pairs.parquet, corruptions.parquet (vertices, edges, overlay_png) and wireframes.parquet
(the ground truths). Picture paths come from the ``overlay_png`` column (relative to the dataset
root) and are served under position-based URLs, so no file name reaches the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from spare_gen.annotate.plan import PAIRS_FILE, Step
from spare_gen.rating.pairs import Side

CORRUPTIONS_FILE = "corruptions.parquet"
WIREFRAMES_FILE = "wireframes.parquet"
PAIR_INPUT_COLUMNS = ("pair_id", "model_id", "left_id", "right_id", "pair_type")
VARIANT_INPUT_COLUMNS = ("corruption_id", "vertices", "edges", "overlay_png")
GT_PICTURE_COLUMN = "gt_png"  # optional: the ground truth alone, drawn like the overlays
GT_INPUT_COLUMNS = ("model_id", "vertices", "edges")
DECIMALS = 5  # coordinates sent to the browser (normalised: bounding-box diagonal 1)


class Picture(StrEnum):
    """The pictures of a step: each shown candidate over the ground truth, and the ground truth alone."""

    LEFT = "left"
    RIGHT = "right"
    GT = "gt"


@dataclass(frozen=True)
class Graph:
    vertices: list[list[float]]
    edges: list[list[int]]

    def as_json(self) -> dict:
        return {"vertices": self.vertices, "edges": self.edges}


def _graph(vertices, edges) -> Graph:
    """A JSON-ready graph from Parquet list cells (None, e.g. a failed extraction, is an empty graph)."""
    vertices = [] if vertices is None else vertices
    edges = [] if edges is None else edges
    v = np.asarray([np.asarray(p, dtype=float) for p in vertices], dtype=float).reshape(-1, 3)
    e = np.asarray([np.asarray(p, dtype=np.int64) for p in edges], dtype=np.int64).reshape(-1, 2)
    return Graph(np.round(v, DECIMALS).tolist(), e.tolist())


def _read(path: Path, columns: tuple[str, ...] | None, required: tuple[str, ...], optional: tuple[str, ...] = ()):
    """``columns`` (None: all) and those of ``optional`` present of a Parquet file, which must have ``required``."""
    if not path.is_file():
        raise FileNotFoundError(f"annotate needs {path}, which does not exist (run `spare-gen pool` first)")
    names = pq.read_schema(path).names
    missing = [c for c in required if c not in names]
    if missing:
        raise ValueError(f"{path} is missing columns {missing}")
    wanted = None if columns is None else [*columns, *(c for c in optional if c in names)]
    return pd.read_parquet(path, columns=wanted)


class Pool:
    """The pool's pairs and geometry, loaded once at server start."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.pairs = _read(self.out / PAIRS_FILE, None, PAIR_INPUT_COLUMNS)
        self.seed = int(self.pairs["seed"].iloc[0]) if "seed" in self.pairs.columns and len(self.pairs) else 0
        corruptions = _read(
            self.out / CORRUPTIONS_FILE, VARIANT_INPUT_COLUMNS, VARIANT_INPUT_COLUMNS, (GT_PICTURE_COLUMN,)
        )
        truths = _read(self.out / WIREFRAMES_FILE, GT_INPUT_COLUMNS, GT_INPUT_COLUMNS)
        self._pair = {str(r.pair_id): r for r in self.pairs.itertuples(index=False)}
        self._corruption = {str(r.corruption_id): r for r in corruptions.itertuples(index=False)}
        self._truth = {str(r.model_id): r for r in truths.itertuples(index=False)}
        shown = set(self.pairs["left_id"].astype(str)) | set(self.pairs["right_id"].astype(str))
        unknown = sorted(shown - set(self._corruption))
        if unknown:
            raise ValueError(f"{self.out / PAIRS_FILE} names corruptions missing from {CORRUPTIONS_FILE}: {unknown[:5]}")

    def shown_ids(self, step: Step) -> tuple[str, str]:
        """(corruption shown left, corruption shown right) for a step."""
        p = self._pair[step.pair_id]
        return (str(p.right_id), str(p.left_id)) if step.shown_swapped else (str(p.left_id), str(p.right_id))

    def payload(self, step: Step) -> dict:
        """Ground truth and the two shown candidates as vertex/edge lists (nothing else about them)."""
        p = self._pair[step.pair_id]
        truth = self._truth.get(str(p.model_id))
        gt = _graph(None, None) if truth is None else _graph(truth.vertices, truth.edges)
        out = {"gt": gt.as_json()}
        for side, vid in zip((Side.LEFT.value, Side.RIGHT.value), self.shown_ids(step)):
            out[side] = _graph(self._corruption[vid].vertices, self._corruption[vid].edges).as_json()
        return out

    def picture(self, step: Step, which: Picture) -> Path | None:
        """The picture file of a shown candidate or of the ground truth (None when the pool has none)."""
        left, right = self.shown_ids(step)
        corruption = self._corruption[right if which is Picture.RIGHT else left]
        rel = getattr(corruption, GT_PICTURE_COLUMN if which is Picture.GT else "overlay_png", None)
        if rel is None or (isinstance(rel, float) and np.isnan(rel)) or not str(rel):
            return None
        path = self.out / str(rel)
        return path if path.is_file() else None
