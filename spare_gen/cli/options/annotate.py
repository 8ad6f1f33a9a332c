"""`spare-gen annotate OUT`: serve the rater web app on a pool.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.annotate``.
"""

from __future__ import annotations

import argparse

from spare_gen.annotate.settings import Settings
from spare_gen.rating.answers_format import ANSWERS_FORMAT

DESCRIPTION = (
    "Serve a local page where raters compare two corrupted wireframes with the ground truth: synchronised\n"
    "rotatable 3D views and the overlay pictures; keys left arrow or 1 = left, right arrow or 3 = right,\n"
    "down arrow or 2 = equal. Each rater (URL ?rater=NAME) gets their own random order, sanity and repeat\n"
    "pairs; every answer is appended and fsync'ed at once, and a rater who comes back continues where they\n"
    "stopped. Rank the answers with `spare-gen rank OUT OUT/annotations`."
)
DEFAULTS = Settings()  # the rater plan's defaults, declared once in spare_gen.annotate.settings
EPILOG = ANSWERS_FORMAT + "\n\n" + """input: OUT is a pool folder written by `spare-gen run` or `spare-gen pool` (pairs.parquet,
corruptions.parquet, wireframes.parquet), e.g.

  spare-gen annotate outputs/default --rater alice --token s3cret-alice
  # then open http://127.0.0.1:8765/?token=s3cret-alice&rater=alice

Every request must carry the server's token (a new random one unless --token gives it): open the URL
`annotate` prints; other raters add &rater=NAME to it."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a pool folder (pairs.parquet, corruptions.parquet, wireframes.parquet)")
    p.add_argument("--port", type=int, default=8765, help="TCP port (default 8765)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--token", default=None,
                   help="the token every request must carry, as in the printed URL (default: a new random one)")
    p.add_argument("--rater", default=None, help="rater name used when the URL has no ?rater= (default: ask)")
    p.add_argument("--sanity", type=int, default=DEFAULTS.sanity,
                   help=f"sanity pairs per rater, drawn from the pool's (default {DEFAULTS.sanity})")
    p.add_argument("--repeat-fraction", type=float, default=DEFAULTS.repeat_fraction,
                   help=f"share of a rater's pairs shown a second time, some sides swapped (default {DEFAULTS.repeat_fraction})")
    p.add_argument("--break-every", type=int, default=DEFAULTS.break_every,
                   help=f"break prompt every N answers (default {DEFAULTS.break_every}; 0 never)")
