"""Reference human accuracies on the three multiple-choice tasks, as the SPARE3D paper reports them.

Source: Xiang et al., "SPARE3D: A Dataset for SPAtial REasoning on Three-View Line Drawings", CVPR 2020,
Figure 6 caption (each task module declares its numbers: ``TaskSpec.human_reference``). "Untrained" is the average of 100+ crowd-sourced people answering 4 random questions
per task; "trained" is the best of 5 engineering master students after ~30 minutes of training, 100
questions per task. Measured on the paper's own questions, not on ours: a reference point, not a bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.tasks import TASK_SPECS

SOURCE = "SPARE3D (Xiang et al., CVPR 2020), Figure 6 caption"


@dataclass(frozen=True)
class HumanReference:
    """Human accuracy on one task: the untrained average and the trained maximum (fractions)."""

    untrained_average: float
    trained_max: float

    def to_dict(self) -> dict:
        return {"untrained_average": self.untrained_average, "trained_max": self.trained_max, "source": SOURCE}


HUMAN_RESULTS: dict[TaskName, HumanReference] = {
    task: HumanReference(*spec.human_reference) for task, spec in TASK_SPECS.items() if spec.human_reference}


def human_reference(task: TaskName | str) -> HumanReference | None:
    """The paper's human results for ``task``, or None (the generation tasks have none)."""
    return HUMAN_RESULTS.get(TaskName(task))
