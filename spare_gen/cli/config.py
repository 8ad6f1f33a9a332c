"""`spare-gen config`: print the resolved, validated config."""

from __future__ import annotations

import argparse
import json
import sys

from spare_gen.cli.common import config_line, resolve_config
from spare_gen.config.base import EVERY_OPTION


def run(args: argparse.Namespace) -> int:
    config = resolve_config(args)
    print(config_line(args), file=sys.stderr)
    print(json.dumps(config.model_dump(mode="json", context=EVERY_OPTION), indent=2))
    return 0
