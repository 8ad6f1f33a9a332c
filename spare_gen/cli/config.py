"""`spare-gen config`: print the resolved, validated config."""

from __future__ import annotations

import argparse
import json

from spare_gen.cli.common import CONFIG_INPUT, add_config_arguments, resolve_config

EPILOG = CONFIG_INPUT


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p)


def run(args: argparse.Namespace) -> int:
    print(json.dumps(resolve_config(args).model_dump(mode="json"), indent=2))
    return 0
