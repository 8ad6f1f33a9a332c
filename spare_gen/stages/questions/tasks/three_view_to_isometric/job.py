"""three_view_to_isometric: the typed cut job one cut set's attempts share, and the cut rules' constants.

Imported by both sides (the worker side needs ``CUT_TIMEOUT_FACTOR``), so nothing here imports ``cad``.
"""

from __future__ import annotations

from dataclasses import dataclass

from spare_gen.config.schema import RenderConfig, TaskName
from spare_gen.config.tasks.three_view_to_isometric import CutterFamily
from spare_gen.stages.questions.layout import FRONT, RIGHT, TARGET_POSE, TOP, pose_view
from spare_gen.stages.questions.schema import STAGED_CUTS_DIR

TASK = TaskName.THREE_VIEW_TO_ISOMETRIC
TARGET = pose_view(TARGET_POSE)
CUT_VIEWS = (FRONT, RIGHT, TOP, TARGET)
SOURCE_VIEWS = (FRONT, RIGHT, TOP)  # cut 0's, stored as the question's three views
MIN_REMOVED = 0.02  # a cut removing less than this share of the volume "missed" the model
MAX_REMOVED = 0.9  # a cut removing more leaves a sliver
# Cut sets do several booleans and draw four objects: their child gets this many per-model budgets (the forked
# attempts charged to it too); each boolean and each view's HLR inside has questions.cut_budget_s.
CUT_TIMEOUT_FACTOR = 4
MAX_OVER_BUDGET = 3  # attempts over budget before the model is given up (cut_too_slow)
SLOW_BOOLEAN_HOOK = "slow_boolean"  # test hook: the unit's first boolean burns CPU until its budget stops it


def staged_cut_dir(model_id: str) -> str:
    """Folder where the unit writes a model's cut objects, relative to the dataset root: the question stage
    publishes them to ``CUTS_DIR/<model_id>`` only if a question uses them."""
    return f"{STAGED_CUTS_DIR}/{model_id}"


@dataclass(frozen=True)
class CutJob:
    """What every attempt of one cut set needs (held by the forked copy for the whole set: sent once, or inherited).

    ``unit_budget_s`` is the CPU budget of the whole set (None: no limit); ``slow_boolean`` is the
    set's own test hook, not the one the copy was forked with.
    """

    model_id: str
    shape_path: str
    out_dir: str
    rel: str  # the cut objects' folder, relative to the dataset root
    seed: int
    bbox: tuple[float, ...]
    model_volume: float
    cutters: CutterFamily
    render: RenderConfig
    framing: dict
    hlr_method: str
    tolerance_px: float
    min_extent: float
    max_attempts: int
    unit_budget_s: float | None
    slow_boolean: bool
