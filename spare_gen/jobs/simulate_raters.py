"""`spare-gen simulate-raters OUT`: dry-run a study by writing an answers CSV of simulated raters.

Reads ``<out>/pairs.parquet`` and ``<out>/corruptions.parquet``; each rater group prefers the variant with
the higher hidden quality, a weighted mix of metrics (``--truth 'edge_f1=0.7,corner_f1=0.3'``), and
answers correctly with its accuracy. Writes the CSV (pair_id, rater_id, choice) atomically; rater ids start
with ``sim-`` so reports say the judgements are simulated.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from spare_gen import atomic
from spare_gen.annotate.plan import ANSWERS_DIR
from spare_gen.jobs.defaults import SIMULATED_TRUTH
from spare_gen.ranking.agreement import metric_directions
from spare_gen.ranking.judgements import validate_pairs
from spare_gen.ranking.raters import SIMULATED_PREFIX
from spare_gen.ranking.simulate import metric_mix_quality, parse_weights, simulate_judgements

# beside the raters' answers, where `rank OUT OUT/annotations` reads; a rater name cannot start with "_"
DEFAULT_ANSWERS = f"{ANSWERS_DIR}/_simulated_raters.csv"


def parse_group(text: str) -> tuple[list[float], str]:
    """'0.9,0.9,0.8:edge_f1=1' -> ([0.9, 0.9, 0.8], 'edge_f1=1'); without ':' the default truth is used."""
    accuracies, _, truth = str(text).partition(":")
    try:
        values = [float(a) for a in accuracies.split(",") if a.strip()]
    except ValueError:
        raise ValueError(f"--group {text!r}: accuracies must be numbers, e.g. '0.9,0.9:edge_f1'") from None
    if not values:
        raise ValueError(f"--group {text!r} lists no rater accuracy")
    return values, truth or SIMULATED_TRUTH


def run(
    out_dir: str | os.PathLike,
    *,
    groups: list[tuple[list[float], str]],
    answers: str | os.PathLike | None = None,
    seed: int = 0,
    tie_margin: float = 0.0,
) -> dict:
    """Simulate every group on every pair and write one answers CSV; returns its path and counts."""
    out = Path(out_dir)
    for name in ("pairs.parquet", "corruptions.parquet"):
        if not (out / name).is_file():
            raise FileNotFoundError(f"simulate-raters needs {out / name}, which does not exist; build a pool first")
    pairs = validate_pairs(pd.read_parquet(out / "pairs.parquet"))
    directions = metric_directions()
    present = set(pq.read_schema(out / "corruptions.parquet").names)
    columns = ["corruption_id"] + [m for m in directions if m in present]
    variants = pd.read_parquet(out / "corruptions.parquet", columns=columns)
    frames = []
    for g, (accuracies, truth) in enumerate(groups, start=1):
        quality = metric_mix_quality(variants, parse_weights(truth), directions)
        raters = {f"{SIMULATED_PREFIX}g{g}-{i:02d}": a for i, a in enumerate(accuracies)}
        frames.append(simulate_judgements(pairs, quality, raters, seed, tie_margin=tie_margin))
    table = pd.concat(frames, ignore_index=True)
    path = Path(answers) if answers is not None else out / DEFAULT_ANSWERS
    buffer = io.StringIO()
    table.to_csv(buffer, index=False)
    atomic.write_text(path, buffer.getvalue())
    print(f"spare-gen: {len(table)} simulated answers from {table['rater_id'].nunique()} raters -> {path}")
    return {"answers": str(path), "n_answers": int(len(table)), "n_raters": int(table["rater_id"].nunique())}
