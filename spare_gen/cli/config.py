"""`spare-gen config`: print the resolved, validated config, after the checks a run makes before any work."""

from __future__ import annotations

import argparse
import json
import sys

from spare_gen.cli.common import config_line, resolve_config
from spare_gen.config.base import EVERY_OPTION
from spare_gen.jobs.preflight import preflight
from spare_gen.stage_table import STAGE_NAMES


def run(args: argparse.Namespace) -> int:
    config = resolve_config(args)
    preflight(config, STAGE_NAMES)  # what `spare-gen run` refuses before any work, refused here too
    print(config_line(args), file=sys.stderr)
    print(json.dumps(config.model_dump(mode="json", context=EVERY_OPTION), indent=2))
    return 0
