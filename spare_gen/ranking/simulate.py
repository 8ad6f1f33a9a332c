"""Simulated raters: judgements in the annotation CSV format from hidden true qualities.

Each rater answers every pair. With probability equal to the rater's accuracy the answer is the
truth: the side with the higher quality, or 'equal' when the two qualities are within ``tie_margin``.
Otherwise the rater errs: against a decisive truth they pick the other side or 'equal' (the share of
'equal' among errors is ``error_equal_share``); against an 'equal' truth they pick left or right with
even odds. The only randomness is ``derive_rng(seed, "simulated-rater", rater_id)``, drawn in pair_id
order, so a rater's answers do not depend on other raters or on the row order of ``pairs``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from spare_gen.ranking.judgements import ANSWER_COLUMNS, Choice
from spare_gen.rng import derive_rng

DEFAULT_ACCURACY = 0.9
DEFAULT_ERROR_EQUAL_SHARE = 0.5


def rater_accuracies(raters: int | Sequence[float] | Mapping[str, float]) -> dict[str, float]:
    """Rater id -> accuracy: n raters 'sim-00'.. at DEFAULT_ACCURACY, one per listed accuracy, or as given."""
    if isinstance(raters, Mapping):
        accuracies = {str(k): float(v) for k, v in raters.items()}
    elif isinstance(raters, (int, np.integer)):
        if raters < 1:
            raise ValueError(f"need at least one simulated rater, got {raters!r}")
        accuracies = {f"sim-{i:02d}": DEFAULT_ACCURACY for i in range(int(raters))}
    else:
        accuracies = {f"sim-{i:02d}": float(a) for i, a in enumerate(raters)}
    bad = {k: v for k, v in accuracies.items() if not 0.0 <= v <= 1.0}
    if bad or not accuracies:
        raise ValueError(f"rater accuracies must be in [0, 1] and at least one, got {bad or accuracies}")
    return accuracies


def true_choices(pairs: pd.DataFrame, true_quality: Mapping[str, float], tie_margin: float = 0.0) -> np.ndarray:
    """The correct answer per pair row: 'left'/'right' for the higher quality, 'equal' within tie_margin."""
    quality = pd.Series({str(k): float(v) for k, v in true_quality.items()}, dtype=float)
    ids = set(pairs["left_id"].astype(str)) | set(pairs["right_id"].astype(str))
    unknown = sorted(ids - set(quality.index))
    if unknown:
        raise ValueError(f"true_quality lacks corruptions {unknown[:10]}{' ...' if len(unknown) > 10 else ''}")
    diff = pairs["left_id"].astype(str).map(quality).to_numpy() - pairs["right_id"].astype(str).map(quality).to_numpy()
    side = np.where(diff > 0, Choice.LEFT.value, Choice.RIGHT.value)
    return np.where(np.abs(diff) <= tie_margin, Choice.EQUAL.value, side)


def simulate_judgements(
    pairs: pd.DataFrame,
    true_quality: Mapping[str, float],
    raters: int | Sequence[float] | Mapping[str, float] = 5,
    seed: int = 0,
    *,
    tie_margin: float = 0.0,
    error_equal_share: float = DEFAULT_ERROR_EQUAL_SHARE,
) -> pd.DataFrame:
    """Answers of simulated raters on every pair: a DataFrame with columns pair_id, rater_id, choice."""
    if not 0.0 <= error_equal_share <= 1.0:
        raise ValueError(f"error_equal_share must be in [0, 1], got {error_equal_share!r}")
    ordered = pairs.assign(pair_id=pairs["pair_id"].astype(str)).sort_values("pair_id", kind="stable")
    truth = true_choices(ordered, true_quality, tie_margin)
    opposite = np.where(truth == Choice.LEFT.value, Choice.RIGHT.value, Choice.LEFT.value)
    frames = []
    for rater_id, accuracy in rater_accuracies(raters).items():
        rng = derive_rng(seed, "simulated-rater", rater_id)
        correct = rng.random(len(ordered)) < accuracy
        error_draw = rng.random(len(ordered))
        wrong = np.where(
            truth == Choice.EQUAL.value,
            np.where(error_draw < 0.5, Choice.LEFT.value, Choice.RIGHT.value),
            np.where(error_draw < error_equal_share, Choice.EQUAL.value, opposite),
        )
        choice = np.where(correct, truth, wrong)
        frames.append(pd.DataFrame({"pair_id": ordered["pair_id"].to_numpy(), "rater_id": rater_id, "choice": choice}))
    return pd.concat(frames, ignore_index=True).loc[:, list(ANSWER_COLUMNS)]


def parse_weights(text: str) -> dict[str, float]:
    """'edge_f1=0.7,corner_f1=0.3' (or one name, weight 1) -> {metric: weight}; one-line ValueError if bad."""
    weights: dict[str, float] = {}
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        name, _, value = part.partition("=")
        try:
            weights[name.strip()] = float(value) if value else 1.0
        except ValueError:
            raise ValueError(f"hidden truth {text!r}: weight {value!r} of {name!r} is not a number") from None
    if not weights:
        raise ValueError(f"hidden truth {text!r} names no metric; use e.g. 'edge_f1=0.7,corner_f1=0.3'")
    return weights


def metric_mix_quality(
    corruptions: pd.DataFrame, weights: Mapping[str, float], higher_is_better: Mapping[str, bool]
) -> dict[str, float]:
    """Hidden quality per corruption: the weighted sum of its metric values, each oriented so higher is better
    and standardised over the corruptions (z-scores), so weights compare metrics on one scale.

    ``corruptions`` has corruption_id and the metric columns; a missing value counts as the metric's mean.
    """
    unknown = [m for m in weights if m not in corruptions.columns or m not in higher_is_better]
    if unknown:
        raise ValueError(f"hidden truth names metric {unknown[0]!r}, which the corruptions table lacks")
    total = np.zeros(len(corruptions))
    for name, weight in weights.items():
        values = corruptions[name].astype(float) * (1.0 if higher_is_better[name] else -1.0)
        std = float(values.std(ddof=0))
        z = (values - values.mean()) / (std if std > 0 else 1.0)
        total += weight * z.fillna(0.0).to_numpy()
    return dict(zip(corruptions["corruption_id"].astype(str), total.tolist()))
