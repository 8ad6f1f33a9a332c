"""Train a baseline (the small CNN, or SPARE3D's with --arch) on one task of a dataset, then score its test predictions.

    python pipelines/train_and_evaluate_baseline.py outputs/default --task isometric_to_pose --epochs 20

Needs the ``torch`` extra (``pip install -e ".[torch]"`` in the repository). Writes ``OUT/baselines/TASK/`` (model,
learning curve, test predictions) and prints the accuracy with its 95% interval beside chance and the
SPARE3D human results.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.baseline.options import options_from
from spare_gen.baseline.train import PREDICTIONS_NAME
from spare_gen.baseline.train import main as train
from spare_gen.cli.common import script_main
from spare_gen.cli.options.train_baseline import add_train_options
from spare_gen.data.evaluate import main as evaluate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="a dataset written by `spare-gen run`")
    parser.add_argument("--task", default="isometric_to_pose")
    add_train_options(parser)  # spare-gen train-baseline's options, with the same defaults
    args = parser.parse_args()
    out, dest = Path(args.out), Path(args.out) / "baselines" / args.task
    code = train(out, args.task, options_from(vars(args)), dest)
    if code != 0:
        return code
    return evaluate(out, args.task, "test", dest / PREDICTIONS_NAME)


if __name__ == "__main__":
    script_main(main)
