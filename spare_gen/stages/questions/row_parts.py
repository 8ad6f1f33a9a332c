"""Pieces every task's row builder uses: the accepted model, the F, R, T columns, candidate arrangement."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spare_gen.stages.questions.schema import THREE_VIEW_PREFIXES
from spare_gen.stages.questions.select import Stratum
from spare_gen.stages.questions.settings import QuestionResult


@dataclass
class Accepted:
    """A model that passed its task's rules, with the per-model result and its view files."""

    model_id: str
    stratum: Stratum
    result: QuestionResult  # the unit's result (cut set, pose matrix, points, ...); on the client only its decision
    views: dict[str, dict]  # view -> {svg, png, png_sha256}


def three_view_fields(views: dict[str, dict]) -> dict:
    """front_svg, front_png, right_... columns of the F, R, T drawings in ``views``."""
    return {f"{name}_{kind}": views[v][kind] for v, name in THREE_VIEW_PREFIXES.items() for kind in ("svg", "png")}


def arrange(correct, distractors: list, answer: int, rng: np.random.Generator) -> list:
    """Distractors in random order with the correct item inserted at position ``answer``."""
    order = [distractors[i] for i in rng.permutation(len(distractors))]
    return order[:answer] + [correct] + order[answer:]
