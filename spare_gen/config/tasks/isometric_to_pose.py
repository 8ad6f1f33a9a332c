"""isometric_to_pose's options: which poses it offers (``pose_choices``) and which models it leaves out for symmetry
(``symmetry_filter``); the pose sets themselves are the table below.

Adding a pose set: a ``PoseChoices`` member and its row in ``POSE_CHOICE_SETS``; nothing else.
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar

from pydantic import Field

from spare_gen.config.base import TaskOptions


class PoseChoices(str, Enum):
    """The poses isometric_to_pose offers (``POSE_CHOICE_SETS``)."""

    UPPER = "upper"  # 1, 2, 3, 4: quarter turns of one another about +Z; one drawing alone tells nothing of its pose
    SPARE3D = "spare3d"  # 1, 2, 5, 6, the paper's: a drawing from below (5, 6) looks upside down, a question-blind cue


# Answer k means pose choice_poses[k], the set's k-th pose. Upper: the four upper poses, each the previous one turned a
# quarter about +Z, so the isometric drawing alone tells nothing of its pose for any model distribution that is
# invariant under quarter turns about Z (the CSG generator's is). SPARE3D offered 1, 2, 5, 6: every isometric camera
# keeps +Z as image up, so an axis-aligned solid seen from below (5, 6) looks upside down (its visible corners point
# down) and one drawing tells pose 1 or 2 from 5 or 6; no re-orientation of the models can remove that.
POSE_CHOICE_SETS: dict[PoseChoices, tuple[int, ...]] = {
    PoseChoices.UPPER: (1, 2, 3, 4),
    PoseChoices.SPARE3D: (1, 2, 5, 6),
}


class SymmetryFilter(str, Enum):
    """Which models isometric_to_pose leaves out for symmetry."""

    CHOICES = "choices"  # those whose drawings from the four choice poses are not pairwise distinct (always applied)
    # also the quarter of usable models whose F, R, T drawings look most alike by the original's I2P_filter.py
    # heuristic (fewest differing pixel values among F-R, F-T, R turned 90 degrees-T, F-F turned 180 degrees)
    SPARE3D = "spare3d"


class Options(TaskOptions):
    LATER_OPTIONS: ClassVar[frozenset[str]] = frozenset({"symmetry_filter"})
    RECORDED_IN_SUMMARY: ClassVar[tuple[str, ...]] = ("pose_choices",)

    symmetry_filter: SymmetryFilter = Field(
        SymmetryFilter.CHOICES,
        description="isometric_to_pose's models. choices: any model whose four choice-pose drawings are pairwise "
                    "distinct. spare3d: also leave out the quarter of usable models whose F, R, T drawings look "
                    "most alike by the original generator's I2P_filter.py heuristic (rejection rule "
                    "symmetric_three_views)",
    )
    pose_choices: PoseChoices = Field(
        PoseChoices.UPPER,
        description="isometric_to_pose's four choices. upper: poses 1, 2, 3, 4, each the previous one turned a "
                    "quarter about +Z, so one drawing alone tells nothing of its pose. spare3d: poses 1, 2, 5, 6, as "
                    "in the SPARE3D paper, cue included: every camera keeps +Z as image up, so an axis-aligned model "
                    "seen from below (5, 6) looks upside down and one drawing tells 1 or 2 from 5 or 6",
    )

    @property
    def choice_poses(self) -> tuple[int, ...]:
        """The poses of the chosen set, in answer order."""
        return POSE_CHOICE_SETS[self.pose_choices]

    @classmethod
    def check_config(cls, config) -> None:
        """The original's symmetry filter scores the F, R, T PNGs."""
        if config.questions.symmetry_filter is SymmetryFilter.SPARE3D and not config.render.png:
            raise ValueError("questions.symmetry_filter = 'spare3d' scores the F, R, T PNGs: "
                             "it needs render.png = true")
