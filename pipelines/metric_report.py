"""Metric property report: run the paper's metric "unit tests" on the GT wireframes of an output folder.

Reads ``<out>/wireframes.parquet``, writes ``<out>/reports/metric_properties.md`` (a Table-2-like Markdown
table) and ``<out>/reports/metric_properties.parquet`` (one row per test and metric) atomically.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.atomic import write_parquet, write_text
from spare_gen.metrics.properties import PASS_RATE, TESTS, pass_rates, property_cases, render_markdown
from spare_gen.wireframes.model import Wireframe

WIREFRAME_COLUMNS = ["model_id", "vertices", "edges", "vertex_kinds"]
MARKDOWN_NAME = "metric_properties.md"
PARQUET_NAME = "metric_properties.parquet"


def load_wireframes(path: Path, max_models: int | None = None) -> tuple[list[str], list[Wireframe]]:
    """(model ids, wireframes) of the usable rows (status ok when there is a status column, vertices present),
    sorted by model id so the report does not depend on row order."""
    if not path.exists():
        raise FileNotFoundError(f"no wireframes table at {path}; run the wireframe stage first")
    present = set(pq.read_schema(path).names)
    columns = WIREFRAME_COLUMNS + (["status"] if "status" in present else [])
    rows = [
        r
        for r in pq.read_table(path, columns=columns).to_pylist()
        if r.get("status", "ok") == "ok" and r["vertices"] is not None and r["edges"] is not None
    ]
    rows.sort(key=lambda r: str(r["model_id"]))
    if max_models is not None:
        rows = rows[: max(0, int(max_models))]
    return [str(r["model_id"]) for r in rows], [Wireframe.from_row(r) for r in rows]


def _long_table(cases: pd.DataFrame) -> pd.DataFrame:
    """One row per (test, metric): category, pass rate, number of applicable and passing wireframes."""
    category = {t: c.value for t, c, _ in TESTS}
    grouped = cases.groupby(["test", "metric"], sort=False)["passed"]
    table = pd.DataFrame(
        {
            "n_cases": grouped.count().astype("int64"),
            "n_passed": grouped.sum().astype("int64"),
        }
    ).reset_index()
    table["pass_rate"] = table["n_passed"] / table["n_cases"].where(table["n_cases"] > 0)
    table["passed"] = table["pass_rate"] >= PASS_RATE
    table.insert(0, "category", table["test"].map(category))
    return table


def run(out_dir: Path, *, seed: int = 0, max_models: int | None = None) -> dict:
    """Run the property report on ``<out_dir>/wireframes.parquet``; print and write the results."""
    out_dir = Path(out_dir)
    ids, wireframes = load_wireframes(out_dir / "wireframes.parquet", max_models)
    if not wireframes:
        raise ValueError(f"no wireframes to test in {out_dir / 'wireframes.parquet'}")
    cases = property_cases(wireframes, seed=seed, model_ids=ids)
    rates = pass_rates(cases)
    title = (
        f"# Metric properties\n\nShare of {len(wireframes)} GT wireframes passing each test (seed {seed}); "
        f"bold = passed (>= {PASS_RATE:.0%}).\n\n"
    )
    markdown = title + render_markdown(rates)
    print(markdown)
    reports = out_dir / "reports"
    md_path = write_text(reports / MARKDOWN_NAME, markdown)
    pq_path = write_parquet(reports / PARQUET_NAME, pa.Table.from_pandas(_long_table(cases), preserve_index=False))
    passes = (rates >= PASS_RATE).sum(axis=0)
    return {
        "n_models": len(wireframes),
        "markdown_path": str(md_path),
        "parquet_path": str(pq_path),
        "pass_counts": {m: int(passes[m]) for m in rates.columns},
        "n_tests": len(rates),
    }
