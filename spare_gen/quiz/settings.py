"""What shapes a person's quiz plan and who a dry run simulates, declared without the question tables: ``spare-gen
quiz --help`` shows these defaults; ``spare_gen.quiz.plan`` and ``spare_gen.quiz.simulate`` use them."""

from __future__ import annotations

from dataclasses import dataclass, replace

from spare_gen.data.human_protocol import Protocol
from spare_gen.webapp.store import check_name

PAPER_QUESTIONS = {Protocol.UNTRAINED: 4, Protocol.TRAINED: 100}  # SPARE3D's test questions per task


@dataclass(frozen=True)
class Settings:
    """What shapes a plan; stored with it. ``questions`` 0: the protocol's paper value (``PAPER_QUESTIONS``)."""

    protocol: Protocol = Protocol.UNTRAINED
    questions: int = 0  # test questions per task (fewer when the test split has fewer)
    training_questions: int = 20  # trained: training questions per task, at most
    training_minutes: float = 30.0  # trained: training time in all, an equal share per task (quiz.session)
    time_limit_s: float = 60.0  # trained: seconds per test question (an answer after it counts as wrong)

    def resolved(self) -> "Settings":
        """These settings with ``questions`` set (the protocol's paper value for 0)."""
        return replace(self, protocol=Protocol(self.protocol),
                       questions=self.questions or PAPER_QUESTIONS[Protocol(self.protocol)])

    @property
    def trained(self) -> bool:
        return Protocol(self.protocol) is Protocol.TRAINED


@dataclass(frozen=True)
class People:
    """Who is simulated: ``count`` people named ``<prefix>-000``..., right with ``accuracy``, ``seconds`` a question."""

    count: int = 20
    accuracy: float = 0.8
    seconds: float = 20.0
    seed: int = 0
    prefix: str = "sim"

    def names(self) -> list[str]:
        return [check_name(f"{self.prefix}-{i:03d}", "person") for i in range(self.count)]
