"""One split's probe inputs, read where they are needed: on a Dask worker during a run, or in the caller."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from spare_gen.audit.features import DrawingFeatures, FeatureKind, needed_svgs, split_features
from spare_gen.audit.surface import FolderListing, SurfaceProbe, surface_data, task_columns
from spare_gen.config.schema import TaskName
from spare_gen.data.tables import DrawingVectors
from spare_gen.stages.questions.tasks import SPLITS

Source = FeatureKind | SurfaceProbe  # drawing features, or what a model sees besides pixels


def probe_split_data(out: Path, task: TaskName, split: str, source: Source, rows: tuple[int, int] | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(x, answers) of one split for one feature set; reads only this split's files and the vectors they need.

    ``rows`` = (start, stop): only those questions' drawing features (``join_split_data`` joins the parts); the
    surface probes read a split whole."""
    if isinstance(source, FeatureKind):
        svgs = needed_svgs(out, [task], (split,), rows) if source is FeatureKind.STATS else []
        return split_features(out, task, split, source, DrawingFeatures(out, DrawingVectors.load(out, svgs)), rows)
    assert rows is None, "surface probes read a split whole"
    return surface_data(out, task, split, source, task_columns(out, task, SPLITS), FolderListing(out))


def join_split_data(*parts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One split's (x, answers) from its consecutive row parts."""
    return np.concatenate([x for x, _ in parts]), np.concatenate([y for _, y in parts])
