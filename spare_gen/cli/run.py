"""`spare-gen run`: regenerate a dataset (models, drawings, questions, and the pool if enabled)."""

from __future__ import annotations

import argparse

from spare_gen.cli.common import config_line, resolve_config
from spare_gen.cli.job import run_job
from spare_gen.config import ConfigError
from spare_gen.stage_table import STAGE_NAMES


def run(args: argparse.Namespace) -> int:
    config = resolve_config(args)
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    bad = [s for s in stages if s not in STAGE_NAMES]
    if bad:
        raise ConfigError(f"--stages: unknown stage {bad[0]!r}; choose from {', '.join(STAGE_NAMES)}")
    return run_job(config, stages, announce=config_line(args))
