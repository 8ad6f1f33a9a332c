"""Binomial accuracy with a Wilson confidence interval, shared by scoring and the bias audit."""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import binomtest

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Accuracy:
    """``correct`` of ``total`` with the Wilson interval at ``confidence`` (NaN bounds when total is 0)."""

    correct: int
    total: int
    low: float
    high: float
    confidence: float = CONFIDENCE

    @property
    def value(self) -> float:
        return self.correct / self.total if self.total else float("nan")

    def contains(self, p: float) -> bool:
        return self.low <= p <= self.high

    def to_dict(self) -> dict:
        return {"correct": self.correct, "total": self.total, "accuracy": self.value,
                "ci": [self.low, self.high], "confidence": self.confidence}


def wilson(correct: int, total: int, confidence: float = CONFIDENCE) -> Accuracy:
    """Accuracy ``correct / total`` with its Wilson score interval (scipy's binomtest)."""
    if not 0 <= correct <= total:
        raise ValueError(f"correct count {correct!r} outside 0..{total!r}")
    if total == 0:
        return Accuracy(0, 0, float("nan"), float("nan"), confidence)
    ci = binomtest(int(correct), int(total)).proportion_ci(confidence_level=confidence, method="wilson")
    return Accuracy(int(correct), int(total), float(ci.low), float(ci.high), confidence)
