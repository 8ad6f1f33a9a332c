"""The jobs' defaults that their commands' ``--help`` shows, declared once: the jobs and the help both read them here.

This module imports nothing heavy, so a command's help does not load the job it runs.
"""

from __future__ import annotations

from spare_gen.metrics import RECOMMENDED_MODELS

METRIC_REPORT_MODELS = RECOMMENDED_MODELS  # GT wireframes the metric report aims for (the pool's first, then extracted)
SIMULATED_RATERS = "0.9,0.9,0.9,0.9,0.9"  # accuracies of the one group of simulated raters without --group
SIMULATED_TRUTH = "edge_f1"  # their hidden preference when a group names none
EXPORT_SIZE = 64  # the square image side of `spare-gen export`'s arrays
