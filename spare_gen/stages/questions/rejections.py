"""Named rules that reject a model or a cut-object attempt in the question stage (counted for the dataset card)."""

from __future__ import annotations

from enum import Enum


class QuestionRejection(str, Enum):
    """Named rules that reject a model or a candidate (counted CLEVR-style for the dataset card)."""

    # model-level filters from the drawing stage (rule 4)
    NOT_DRAWN = "not_drawn"  # model or drawing stage failed
    BLANK = "blank"
    TINY = "tiny"
    DUPLICATE_MODEL = "duplicate_model"
    # near-duplicate candidates (rule 3)
    POSES_COINCIDE = "poses_coincide"  # isometric_to_pose: two of the choice poses give the same drawing
    # isometric_to_pose with questions.symmetry_filter = "spare3d": among the quarter of usable models whose F, R, T
    # drawings look most alike by the original generator's I2P_filter.py heuristic
    SYMMETRIC_THREE_VIEWS = "symmetric_three_views"
    NO_DISTINCT_POSES = "no_distinct_poses"  # pose_to_isometric: no query pose with 3 distinct other poses
    # cut objects (three_view_to_isometric), counted per attempt
    CUT_FAILED = "cut_failed"  # the boolean raised or failed
    CUT_MISSED = "cut_missed"  # removed less than the minimum share of the volume
    CUT_EMPTY = "cut_empty"  # removed (almost) everything
    CUT_INVALID = "cut_invalid"  # invalid B-rep
    CUT_DRAW_FAILED = "cut_draw_failed"  # the drawing stage failed or gave a blank/tiny drawing
    CUT_DUPLICATE = "cut_duplicate"  # pose-2 drawing the same as another cut's
    CUT_AMBIGUOUS = "cut_ambiguous"  # F, R and T drawings all the same as the source cut's
    CUT_BOOLEAN_OVER_BUDGET = "cut_boolean_over_budget"  # the boolean used more than questions.cut_budget_s CPU s
    CUT_HLR_OVER_BUDGET = "cut_hlr_over_budget"  # one view's hidden-line removal used more than that
    CUT_TOO_SLOW = "cut_too_slow"  # model-level: too many attempts over their budget (job.MAX_OVER_BUDGET)
    CUT_ATTEMPTS_EXHAUSTED = "cut_attempts_exhausted"  # model-level: a cut slot found no good cutter
    NO_VOLUME = "no_volume"  # model-level: a shell or wire model has no volume to cut
    # point clouds and unit failures
    NO_SURFACE = "no_surface"  # tessellation gave no triangles
    UNIT_FAILED = "unit_failed"  # exception, timeout or crash of the per-model unit


# Rejections counted per candidate attempt (not per model); the rest reject the whole model.
ATTEMPT_RULES = frozenset({
    QuestionRejection.CUT_FAILED, QuestionRejection.CUT_MISSED, QuestionRejection.CUT_EMPTY,
    QuestionRejection.CUT_INVALID, QuestionRejection.CUT_DRAW_FAILED, QuestionRejection.CUT_DUPLICATE,
    QuestionRejection.CUT_AMBIGUOUS, QuestionRejection.CUT_BOOLEAN_OVER_BUDGET, QuestionRejection.CUT_HLR_OVER_BUDGET,
})
