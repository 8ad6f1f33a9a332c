"""`spare-gen validate OUT`: check every question-set rule and every file hash."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.validate import main


def run(args: argparse.Namespace) -> int:
    return main(Path(args.out))
