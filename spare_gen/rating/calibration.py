"""Calibration checks of the severity table: visible, inside the canvas, and worse at high than at low.

The pool's promise to raters (wireframe-metrics paper, Sec. 4: low vs high of one type is an easy
sanity check) holds only when every corruption differs visibly from its ground truth, stays inside the
picture, and the metric its corruption family targets is strictly worse at ``high`` than at ``low``.
The targeted metric per family (given at its registration: ``corruptions.TARGETED_METRIC``):

* ``deform`` splits edges and bends them: edge F1 (a split edge matches at most one of its pieces);
* ``perturb`` splits and moves vertices: vertex F1 over every vertex (corner and curve points alike,
  since perturb picks among all of them);
* ``add`` adds wrong edges: edge F1 (precision falls, recall stays 1);
* ``remove`` deletes vertices: vertex F1 over every vertex.

Used by the acceptance tests, ``benchmarks/pool_calibration.py`` and the effect table of the pool README.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spare_gen.metrics.catalog import corner_prf, edge_prf
from spare_gen.rating.corruptions import TARGETED_METRIC, CorruptionKind, TargetedMetric
from spare_gen.wireframe import Wireframe
from spare_gen.rating.pictures import cameras_for, outside_canvas, visible_difference_px

# (pred, gt, corner_threshold, edge_threshold) -> the targeted score, higher is better
SCORES = {
    TargetedMetric.EDGE_F1: lambda pred, gt, corner, edge: edge_prf(pred, gt, threshold=edge)["f1"],
    TargetedMetric.VERTEX_F1: lambda pred, gt, corner, edge: corner_prf(pred, gt, threshold=corner, kinds="all")["f1"],
}


def targeted_score(kind: str, pred: Wireframe, gt: Wireframe, corner_threshold: float, edge_threshold: float) -> float:
    """The score corruption ``kind`` attacks (higher is better): the metric it registered (``TARGETED_METRIC``)."""
    return float(SCORES[TARGETED_METRIC[CorruptionKind(kind)]](pred, gt, corner_threshold, edge_threshold))


@dataclass(frozen=True)
class CorruptionCheck:
    """One corruption's calibration figures at the rater picture size."""

    kind: str
    severity: str
    visible_px: int  # pixels differing clearly from the ground truth drawn alike (all views)
    outside: int  # vertices outside the canvas in some view
    targeted: float  # the family's targeted score


def check_corruptions(
    gt: Wireframe, corruptions: Iterable[tuple[str, str, Wireframe]], image_size: int, corner_threshold: float,
    edge_threshold: float,
) -> list[CorruptionCheck]:
    """Calibration figures of every ``(kind, severity, wireframe)`` corruption of ``gt``."""
    cameras = cameras_for(gt, image_size)
    return [
        CorruptionCheck(kind, severity, visible_difference_px(gt, wf, cameras), outside_canvas(wf, cameras),
                     targeted_score(kind, wf, gt, corner_threshold, edge_threshold))  # fmt: skip
        for kind, severity, wf in corruptions
    ]
