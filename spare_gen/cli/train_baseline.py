"""`spare-gen train-baseline OUT --task T`: a small CNN trained from scratch on a multiple-choice task."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.cli.common import DATASET_INPUT

EPILOG = DATASET_INPUT + """ with the task's train/val/test splits, e.g.

  spare-gen train-baseline outputs/default --task isometric_to_pose --epochs 20"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="the generated dataset")
    p.add_argument("--task", required=True)
    p.add_argument("--dest", default=None, help="output folder (default: OUT/baselines/TASK)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--size", type=int, default=64, help="images resized to SIZE x SIZE")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0 = all epochs)")
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--channels", default="rgb", help="rgb or bgr")
    p.add_argument("--device", default="auto", help="auto (a GPU if present), cpu, cuda, ...")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from spare_gen.baseline.train import TrainOptions, main  # lazy: torch is an optional extra

    options = TrainOptions(epochs=args.epochs, batch_size=args.batch_size, size=args.size, lr=args.lr,
                           seed=args.seed, max_steps=args.max_steps, workers=args.workers,
                           channels=args.channels, device=args.device)
    return main(Path(args.out), args.task, options, Path(args.dest) if args.dest else None,
                progress=not args.no_progress)
