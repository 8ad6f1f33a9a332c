"""`spare-gen learn-metric OUT ANSWERS`: learn which metric combination predicts the raters, cross-validated.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.learn_metric``.
"""

from __future__ import annotations

import argparse

from spare_gen.ranking.features import Features

EPILOG = """input: OUT is a pool folder; ANSWERS is an answers CSV or a folder of them (pair_id,rater_id,choice),
e.g. spare-gen learn-metric outputs/default outputs/default/annotations
     spare-gen learn-metric outputs/default outputs/default/annotations --features image --backbone /models/dinov2-small
--features image (the paper's learned metric) draws each candidate over its ground truth from one canonical view,
encodes the picture with a frozen DINOv2 (a saved folder or a cached Hugging Face name; never downloaded) and
trains an MLP head with a Bradley-Terry loss; --backbone random-small is for tests and dry runs only."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="pool output folder (pairs.parquet, corruptions.parquet)")
    p.add_argument("answers", help="answers CSV (or folder of CSVs): pair_id,rater_id,choice")
    p.add_argument("--metrics", default="", help="comma-separated metric columns to use (default: all)")
    p.add_argument("--folds", type=int, default=None, help="cross-validation folds (default 5; 10 for image)")
    p.add_argument("--features", default=Features.METRICS.value, choices=[f.value for f in Features],
                   help="metrics: logistic model over metric differences (default); image: frozen DINOv2 features "
                        "of canonical renderings and an MLP head (needs the torch extra)")  # fmt: skip
    p.add_argument("--backbone", default=None,
                   help="image: a folder with a saved Dinov2Model, or a Hugging Face name in the local cache "
                        "(default facebook/dinov2-small); 'random-small': random weights, for tests and dry runs")
    p.add_argument("--image-size", type=int, default=None, help="image: picture side in px (default 224)")
    p.add_argument("--epochs", type=int, default=None, help="image: head training epochs (default 10)")
    p.add_argument("--seed", type=int, default=0, help="image: seed of the backbone, folds and head")
    p.add_argument("--threads", type=int, default=None, help="image: torch CPU threads (default 1)")
