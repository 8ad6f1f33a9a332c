"""`spare-gen run`: regenerate a dataset (models, drawings, questions, and the pool if enabled).

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.run``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import CONFIG_INPUT, add_config_arguments
from spare_gen.stage_table import STAGE_NAMES, stages_help

EPILOG = CONFIG_INPUT


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p)
    p.add_argument("--stages", default=",".join(STAGE_NAMES), help=stages_help())
