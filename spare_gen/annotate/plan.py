"""A rater's session plan: which pairs, in which order, on which sides — fixed once, so a rater can resume.

Every rater sees all regular pairs of pairs.parquet (grouped by model, models and pairs in a random
order), ``sanity`` of the pool's sanity pairs (each inside its model's block) and about
``repeat_fraction`` of them a second time later (``is_repeat``), each showing with its own random
side swap, so about half the repeats come back reversed. The pool's own shared repeat pairs are not
shown: repeats are drawn per rater here. All randomness comes from ``derive_rng(seed, "annotate", rater)``.
The plan is written to ``OUT/annotations/.plans/<rater>.json`` on first use and read back afterwards.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from spare_gen.annotate.settings import Settings
from spare_gen.atomic import write_json
from spare_gen.rng import derive_rng
from spare_gen.webapp.store import check_name
from spare_gen.rating.pairs import PairType

ANSWERS_DIR = "annotations"
PLANS_DIR = ".plans"
PAIRS_FILE = "pairs.parquet"
MIN_REPEAT_GAP = 5  # a repeat comes back at least this many pairs after its first showing, when there is room


@dataclass(frozen=True)
class Step:
    """One pair on the rater's screen: the stored pair and whether its sides are swapped."""

    pair_id: str
    shown_swapped: bool
    is_repeat: bool


def check_rater(rater: str) -> str:
    """A rater id usable as a file name: letters, digits, '_', '.', '-' (starting with a letter or digit), <= 64."""
    return check_name(rater, "rater")


def check_settings(settings: Settings) -> Settings:
    if settings.sanity < 0:
        raise ValueError(f"--sanity {settings.sanity} must be >= 0")
    if not 0.0 <= settings.repeat_fraction <= 0.5:
        raise ValueError(f"--repeat-fraction {settings.repeat_fraction} must be within [0, 0.5]")
    if settings.break_every < 0:
        raise ValueError(f"--break-every {settings.break_every} must be >= 0")
    return settings


def pairs_fingerprint(pairs: pd.DataFrame) -> str:
    """SHA-256 of the pair ids and sides: a stored plan is only valid for the pairs it was drawn from."""
    text = "\n".join(f"{p}\t{l}\t{r}" for p, l, r in pairs[["pair_id", "left_id", "right_id"]].astype(str).values)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan_counts(pairs: pd.DataFrame, settings: Settings) -> tuple[int, int]:
    """(pairs shown once, pairs shown a second time) of every rater's plan: the same for all raters."""
    shown = int((pairs["pair_type"] == PairType.REGULAR.value).sum()) + min(
        settings.sanity, int((pairs["pair_type"] == PairType.SANITY.value).sum()))
    return shown, int(round(settings.repeat_fraction * shown))


def make_plan(pairs: pd.DataFrame, seed: int, rater: str, settings: Settings = Settings()) -> list[Step]:
    """The rater's steps (see the module docstring); deterministic in (pairs, seed, rater, settings)."""
    check_rater(rater)
    check_settings(settings)
    rng = derive_rng(seed, "annotate", rater)
    pairs = pairs.sort_values("pair_id", kind="stable")
    regular = pairs[pairs["pair_type"] == PairType.REGULAR.value]
    sanity = pairs[pairs["pair_type"] == PairType.SANITY.value]
    n_sanity = min(settings.sanity, len(sanity))
    chosen = sanity.iloc[np.sort(rng.choice(len(sanity), size=n_sanity, replace=False))]
    shown = pd.concat([regular, chosen])
    models = sorted(shown["model_id"].astype(str).unique())
    order: list[str] = []
    for k in rng.permutation(len(models)):
        ids = shown.loc[shown["model_id"].astype(str) == models[k], "pair_id"].astype(str).tolist()
        order += [ids[i] for i in rng.permutation(len(ids))]
    steps = [Step(pid, bool(s), False) for pid, s in zip(order, rng.random(len(order)) < 0.5)]

    n_repeats = plan_counts(pairs, settings)[1]
    for k in np.sort(rng.choice(len(order), size=n_repeats, replace=False)):
        at = next(i for i, step in enumerate(steps) if step.pair_id == order[k] and not step.is_repeat)
        lowest = min(at + 1 + MIN_REPEAT_GAP, len(steps))
        steps.insert(int(rng.integers(lowest, len(steps) + 1)), Step(order[k], bool(rng.random() < 0.5), True))
    return steps


def plan_path(out: Path, rater: str) -> Path:
    return Path(out) / ANSWERS_DIR / PLANS_DIR / f"{check_rater(rater)}.json"


def read_plan(path: Path) -> tuple[list[Step], Settings, str]:
    """A stored plan file: its steps, its settings and the SHA-256 of the pairs it was drawn from."""
    stored = json.loads(Path(path).read_text())
    steps = [Step(p, bool(s), bool(r)) for p, s, r in stored["steps"]]
    return steps, Settings(**stored["settings"]), stored["pairs_sha256"]


def load_or_make_plan(
    out: Path, pairs: pd.DataFrame, seed: int, rater: str, settings: Settings
) -> tuple[list[Step], Settings]:
    """The stored plan of ``rater`` (its settings win over ``settings``), or a new one, written atomically."""
    path, fingerprint = plan_path(out, rater), pairs_fingerprint(pairs)
    if path.is_file():
        steps, stored_settings, drawn_from = read_plan(path)
        if drawn_from != fingerprint:
            raise ValueError(
                f"{path}: plan was drawn from other pairs than {Path(out) / PAIRS_FILE}; move it away to start over"
            )
        return steps, stored_settings
    steps = make_plan(pairs, seed, rater, settings)
    write_json(path, {
        "rater": rater, "seed": int(seed), "settings": asdict(settings), "pairs_sha256": fingerprint,
        "steps": [[s.pair_id, int(s.shown_swapped), int(s.is_repeat)] for s in steps],
    })  # fmt: skip
    return steps, settings
