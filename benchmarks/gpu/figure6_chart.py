"""Redraw benchmarks/figure6_gpu_i2p.png (and .svg, .pdf beside it) from the recorded numbers of the GPU run.

    python benchmarks/gpu/figure6_chart.py                       # benchmarks/gpu/figure6_h200.json -> the chart
    python benchmarks/gpu/figure6_chart.py RECORD.json DEST.png  # any record in that format

The record holds each cell's test counts (best-val epoch, as ``figure6.json`` has them); the chart is the Figure 6
pipeline's (spare_gen.baseline.figure6.chart_figure), so the benchmark's chart and a fresh run's look alike. Train
accuracies are in benchmarks/README.md's table; the chart shows test accuracy only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from spare_gen.atomic import write_bytes
from spare_gen.baseline.figure6 import Cell, chart_files
from spare_gen.baseline.options import PAPER_SIZE, Arch, Formulation, recipe
from spare_gen.config.schema import TaskName
from spare_gen.data.stats import wilson

HERE = Path(__file__).resolve().parent
RECORD, CHART = HERE / "figure6_h200.json", HERE.parent / "figure6_gpu_i2p.png"


def cells_of(record: dict) -> list[Cell]:
    cells = []
    for c in record["cells"]:
        task, formulation, arch = TaskName(c["task"]), Formulation(c["formulation"]), Arch(c["arch"])
        paper = None if c["blank_views"] else recipe(task, formulation, arch).paper_test
        cells.append(Cell(task, formulation, arch, c["blank_views"], wilson(0, 0),
                          wilson(c["test_correct"], c["test_total"]), paper, float(c["samples_per_second"]),
                          record["device"], record["epochs"], PAPER_SIZE))
    return cells


def main(argv: list[str]) -> int:
    record_path, chart = (Path(argv[0]), Path(argv[1])) if len(argv) == 2 else (RECORD, CHART)
    record = json.loads(record_path.read_text())
    for suffix, data in chart_files(cells_of(record), record["title"]).items():
        print(write_bytes(chart.with_suffix(suffix), data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
