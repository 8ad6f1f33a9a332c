"""`spare-gen learn-metric OUT ANSWERS`: learn which metric combination predicts the raters, cross-validated."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.jobs.learn_metric import image_settings, run as learn, run_image
from spare_gen.ranking.learned import Features


def run(args: argparse.Namespace) -> int:
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] or None
    if Features(args.features) is Features.IMAGE:
        settings = image_settings(args.backbone, args.image_size, args.folds, args.seed, args.threads, args.epochs)
        run_image(Path(args.out), Path(args.answers), settings, metrics=metrics)
        return 0
    learn(Path(args.out), Path(args.answers), metrics=metrics, **({"folds": args.folds} if args.folds else {}))
    return 0
