"""`spare-gen pool`: the models and a corrupted-wireframe pool for annotation, optionally with methods' predictions."""

from __future__ import annotations

import argparse

from spare_gen.cli.common import CONFIG_INPUT, add_config_arguments, config_line, resolve_config
from spare_gen.cli.job import run_job
from spare_gen.jobs.regenerate import POOL_STAGES

EPILOG = CONFIG_INPUT


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p)
    p.add_argument("--predictions", default=None, metavar="DIR",
                   help="methods' predicted wireframes, DIR/<method>/<model_id>.json|.obj, mixed into the pool")


def run(args: argparse.Namespace) -> int:
    return run_job(resolve_config(args), POOL_STAGES, announce=config_line(args))
