"""`spare-gen evaluate-poses OUT PRED.csv`: TAS / RAS / PAS and ATE of camera-pose predictions on the random views."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.data.evaluate_poses import main


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out), Path(args.predictions))
