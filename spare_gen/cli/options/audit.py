"""`spare-gen audit OUT`: question-blind bias probes per task, recorded in the dataset card.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.audit``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT, add_worker_arguments

EPILOG = DATASET_INPUT + """

exit codes: 0 every probe ran and is within chance; 1 a probe is not within chance (a shortcut);
3 a probe could not run (empty split, too few questions): "not audited", never "within chance"; 2 bad input.
Writes reports/audit.json and the "Bias audit" section of OUT/README.md; prints a table and a summary line.
Example:

  spare-gen audit outputs/default"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run`")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the probes' cross-validation folds and shuffles (default 0; a run's own audit uses "
                        "the config's seed)")
    add_worker_arguments(p, "read the drawings and fit the probes")
