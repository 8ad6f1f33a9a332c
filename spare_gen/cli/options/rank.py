"""`spare-gen rank OUT ANSWERS`: rank pool variants from pairwise judgements.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.rank``.
"""

from __future__ import annotations

import argparse

from spare_gen.rating.answers_format import ANSWERS_FORMAT

EPILOG = ANSWERS_FORMAT + "\n\n" + """input: OUT is a pool folder (pairs.parquet, corruptions.parquet); ANSWERS.csv has a header and the columns
pair_id,rater_id,choice where choice is left, right or equal (pair ids from OUT/pool/annotation_pairs.csv), e.g.

  pair_id,rater_id,choice
  csg_000007-p0000,rater_a,left
  csg_000007-p0001,rater_a,equal"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a pool folder (pairs.parquet, corruptions.parquet)")
    p.add_argument("answers", help="answers CSV (pair_id,rater_id,choice[,is_repeat,...]) or a folder of them, "
                                       "e.g. OUT/annotations (format below)")
    p.add_argument("--item", choices=("type", "variant"), default="type",
                   help="rank corruption types (kind + severity) or single variants (default type)")
    p.add_argument("--dest", default=None, metavar="DIR",
                   help="folder for the reports (default OUT/reports, whose earlier reports are replaced)")
