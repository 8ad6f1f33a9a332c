"""`spare-gen annotate OUT`: serve the rater web app on a pool."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.annotate.plan import Settings
from spare_gen.annotate.server import serve


def run(args: argparse.Namespace) -> int:
    settings = Settings(sanity=args.sanity, repeat_fraction=args.repeat_fraction, break_every=args.break_every)
    return serve(Path(args.out), host=args.host, port=args.port, rater=args.rater, settings=settings,
                 token=args.token)
