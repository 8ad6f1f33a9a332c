"""`spare-gen audit OUT`: question-blind bias probes per task, recorded in the dataset card."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spare_gen.audit.probes import EXIT_ERROR, REPORT_NAME, audit_and_record, exit_code
from spare_gen.audit.text import format_report, summary, warnings
from spare_gen.card.compose import write_audit_section
from spare_gen.card.dataset import CARD_NAME
from spare_gen.runner.cluster import open_client
from spare_gen.store.inventory import REPORTS_DIR
from spare_gen.store.manifest import rehash_files


def run(args: argparse.Namespace) -> int:
    """0 every probe ran and is within chance, 1 one is not, 3 one could not run, 2 on errors."""
    out = Path(args.out)
    print(f"spare-gen audit: {out}: fitting question-blind probes for every task (minutes on a large dataset) ...",
          file=sys.stderr, flush=True)
    try:
        with open_client(args.scheduler, workers=args.workers, dashboard=False, quiet=not args.scheduler,
                         shared=out if args.scheduler else None) as client:
            report, json_path = audit_and_record(out, args.seed, client, show=True)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"spare-gen audit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    card_path = write_audit_section(out, report)
    rehash_files(out, [f"{REPORTS_DIR}/{REPORT_NAME}", CARD_NAME])  # dataset.json's hashes, which validate checks
    print(format_report(report))
    for w in warnings(report):
        print(f"spare-gen audit: WARNING: {w}", file=sys.stderr)
    print(f"report: {json_path}; dataset card section: {card_path}")
    print(f"audit: {summary(report)}")
    return exit_code(report)
