"""`spare-gen config`: print the resolved, validated config.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.config``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import CONFIG_INPUT, add_config_arguments

EPILOG = CONFIG_INPUT


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p)
