"""`spare-gen pool`: the models and a corrupted-wireframe pool for annotation, optionally with methods' predictions.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.pool``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import CONFIG_INPUT, add_config_arguments

EPILOG = CONFIG_INPUT


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p)
    p.add_argument("--predictions", default=None, metavar="DIR",
                   help="methods' predicted wireframes, DIR/<method>/<model_id>.json|.obj, mixed into the pool")
