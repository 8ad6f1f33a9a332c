"""What `learn-metric` learns from; apart from :mod:`spare_gen.ranking.learned` so that the command's help imports
nothing heavy."""

from __future__ import annotations

from enum import Enum


class Features(str, Enum):
    """What `learn-metric` learns from: the pool's metric values, or renderings through a frozen backbone."""

    METRICS = "metrics"
    IMAGE = "image"
