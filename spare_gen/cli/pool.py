"""`spare-gen pool`: the models and a corrupted-wireframe pool for annotation, optionally with methods' predictions."""

from __future__ import annotations

import argparse

from spare_gen.cli.common import config_line, resolve_config
from spare_gen.cli.job import run_job
from spare_gen.stage_table import POOL_STAGES


def run(args: argparse.Namespace) -> int:
    return run_job(resolve_config(args), POOL_STAGES, announce=config_line(args))
