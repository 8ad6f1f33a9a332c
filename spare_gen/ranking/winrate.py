"""Chess-style win rates: each judged pair gives the winner 1 point, a tie 0.5 to both, the loser 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri

CONFIDENCE = 0.95  # of the win-rate intervals


@dataclass(frozen=True)
class Matchups:
    """Judgements pooled per unordered item pair: ``a[k]`` met ``b[k]`` ``games[k]`` times and scored ``score_a[k]``.

    ``a``/``b`` index into ``items``. A judgement with the same item on both sides (two variants of one
    type) says nothing about the ranking of items and is dropped.
    """

    items: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    score_a: np.ndarray
    games: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.items)

    def item_games(self) -> np.ndarray:
        """How many judgements each item took part in."""
        return np.bincount(self.a, self.games, self.n_items) + np.bincount(self.b, self.games, self.n_items)


def matchups(judgements: pd.DataFrame, items: list[str] | tuple[str, ...] | None = None) -> Matchups:
    """Pool ``judgements`` (columns left_item, right_item, left_score) into per-pair totals.

    ``items`` fixes the item order (and may list items that never played); by default sorted labels.
    """
    played = judgements[judgements["left_item"] != judgements["right_item"]]
    if items is None:
        items = sorted(set(judgements["left_item"]) | set(judgements["right_item"]))
    index = {name: i for i, name in enumerate(items)}
    missing = (set(played["left_item"]) | set(played["right_item"])) - set(index)
    if missing:
        raise ValueError(f"judgements name items {sorted(missing)[:10]} not in the item list")
    left = played["left_item"].map(index).to_numpy(np.int64)
    right = played["right_item"].map(index).to_numpy(np.int64)
    left_score = played["left_score"].to_numpy(float)
    a, b = np.minimum(left, right), np.maximum(left, right)
    score_a = np.where(left == a, left_score, 1.0 - left_score)
    frame = pd.DataFrame({"a": a, "b": b, "score_a": score_a, "games": 1.0})
    pooled = frame.groupby(["a", "b"], sort=True).sum().reset_index()
    return Matchups(
        items=tuple(items),
        a=pooled["a"].to_numpy(np.int64),
        b=pooled["b"].to_numpy(np.int64),
        score_a=pooled["score_a"].to_numpy(float),
        games=pooled["games"].to_numpy(float),
    )


def win_rates(judgements: pd.DataFrame, items: list[str] | tuple[str, ...] | None = None) -> pd.DataFrame:
    """Per item: games, wins, ties, losses, win_rate = (wins + ties / 2) / games (NaN if it never played) and its
    95 % interval, win_rate_low and win_rate_high (:func:`win_rate_interval`)."""
    played = judgements[judgements["left_item"] != judgements["right_item"]]
    if items is None:
        items = sorted(set(judgements["left_item"]) | set(judgements["right_item"]))
    sides = pd.concat(
        [
            pd.DataFrame({"item": played["left_item"], "score": played["left_score"]}),
            pd.DataFrame({"item": played["right_item"], "score": 1.0 - played["left_score"]}),
        ],
        ignore_index=True,
    )
    counts = pd.DataFrame(
        {
            "wins": sides["score"].eq(1.0).groupby(sides["item"]).sum(),
            "ties": sides["score"].eq(0.5).groupby(sides["item"]).sum(),
            "losses": sides["score"].eq(0.0).groupby(sides["item"]).sum(),
        }
    ).reindex(list(items), fill_value=0)
    counts = counts.astype(np.int64)
    counts.insert(0, "games", counts.sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        counts["win_rate"] = (counts["wins"] + 0.5 * counts["ties"]) / counts["games"].where(counts["games"] > 0)
    counts["win_rate_low"], counts["win_rate_high"] = win_rate_interval(counts["wins"], counts["ties"], counts["games"])
    counts.index.name = "item"
    return counts


def win_rate_interval(wins, ties, games, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of each win rate, ties counted as half a win: (low, high) arrays, NaN where an item
    never played. A tie scores less spread than a win or a loss, so with ties the interval is on the wide side."""
    k = np.asarray(wins, dtype=float) + 0.5 * np.asarray(ties, dtype=float)
    n = np.asarray(games, dtype=float)
    z = float(ndtri(0.5 + 0.5 * confidence))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        centre = (n * p + z**2 / 2) / (n + z**2)
        half = z / (n + z**2) * np.sqrt(n * p * (1 - p) + z**2 / 4)
        low, high = np.where(k <= 0, 0.0, centre - half), np.where(k >= n, 1.0, centre + half)
    played = n > 0
    return np.where(played, np.clip(low, 0.0, 1.0), np.nan), np.where(played, np.clip(high, 0.0, 1.0), np.nan)
