"""Train a small CNN baseline on one task of a generated dataset, then score its test predictions.

    python pipelines/train_and_evaluate_baseline.py outputs/default --task isometric_to_pose --epochs 20

Needs the ``torch`` extra (``pip install 'spare-gen[torch]'``). Writes ``OUT/baselines/TASK/`` (model,
learning curve, test predictions) and prints the accuracy with its 95% interval beside chance and the
SPARE3D human results.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.baseline.train import PREDICTIONS_NAME, TrainOptions
from spare_gen.baseline.train import main as train
from spare_gen.cli.common import script_main
from spare_gen.data.evaluate import main as evaluate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="a dataset written by `spare-gen run`")
    parser.add_argument("--task", default="isometric_to_pose")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--size", type=int, default=64, help="images resized to SIZE x SIZE")
    args = parser.parse_args()
    out, dest = Path(args.out), Path(args.out) / "baselines" / args.task
    code = train(out, args.task, TrainOptions(epochs=args.epochs, size=args.size), dest)
    if code != 0:
        return code
    return evaluate(out, args.task, "test", dest / PREDICTIONS_NAME)


if __name__ == "__main__":
    script_main(main)
