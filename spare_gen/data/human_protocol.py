"""SPARE3D's two ways of measuring people and a quiz's phases, declared without the tables: what ``spare-gen quiz
--help`` shows, what the answers files and their scores (``spare_gen.data.human_scores``) name."""

from __future__ import annotations

from enum import StrEnum


class Protocol(StrEnum):
    """SPARE3D's two ways of measuring people (see :mod:`spare_gen.quiz.plan`)."""

    UNTRAINED = "untrained"
    TRAINED = "trained"


class Phase(StrEnum):
    TRAINING = "training"
    TEST = "test"


PROTOCOLS = tuple(p.value for p in Protocol)
PHASES = tuple(p.value for p in Phase)
