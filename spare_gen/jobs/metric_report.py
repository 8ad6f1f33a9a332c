"""Metric property report: run the paper's metric "unit tests" on the GT wireframes of an output folder.

Reads ``<out>/wireframes.parquet``, writes ``<out>/reports/metric_properties.md`` (a Table-2-like Markdown
table with each cell's bootstrap interval and the paper's rate beside it) and
``<out>/reports/metric_properties.parquet`` (one row per test and metric) atomically. The wireframes are
tested in parallel on a Dask client (one task per wireframe, a large one split over several): an embedded
cluster, or a running Dask scheduler (``scheduler="tcp://host:port"``, ``spare-gen metric-report --scheduler``)
whose workers see the output folder at the same path, as ``spare-gen run --scheduler`` needs.

The pool usually holds few ground truths (4 by default), too few for stable verdicts. When the output folder
has more usable models (``models.parquet``), the report tops the set up to ``models`` wireframes (default
:data:`DEFAULT_MODELS`) by extracting them with the pool's own extraction and deflection (read from
``dataset.json`` when present), in parallel on the same client; ``models = 0`` keeps the pool's alone.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.store import shards
from spare_gen.atomic import write_parquet, write_text
from spare_gen.config.schema import HouseWireframe, PoolConfig, RunnerConfig
from spare_gen.metrics.paper_table2 import (
    PAPER_VARIANTS,
    UNEXPLAINED,
    diagnose,
    differing_cells,
    paper_rate,
    unexplained_cells,
)
from spare_gen.stages.models.schema import MODELS_FILE
from spare_gen.metrics import RECOMMENDED_MODELS
from spare_gen.metrics.properties import (
    PAPER_ASSUMPTIONS,
    PASS_RATE,
    STEPS,
    TESTS,
    bootstrap_intervals,
    excluded_counts,
    pass_rates,
    property_cases,
    render_markdown,
)
from spare_gen.jobs.defaults import METRIC_REPORT_MODELS as DEFAULT_MODELS
from spare_gen.runner.cluster import open_client
from spare_gen.runner.isolation import Status
from spare_gen.stages.pool.driver import pool_models, wireframe_unit
from spare_gen.stages.pool.worker import wireframe_task
from spare_gen.stages.pool.settings import WIREFRAMES_STAGE, WireframeSettings
from spare_gen.wireframe import Wireframe

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
        if r.get("status", Status.OK) == Status.OK and r["vertices"] is not None and r["edges"] is not None
    ]
    rows.sort(key=lambda r: str(r["model_id"]))
    if max_models is not None:
        rows = rows[: max(0, int(max_models))]
    return [str(r["model_id"]) for r in rows], [Wireframe.from_row(r) for r in rows]


def _pool_settings(out_dir: Path) -> tuple[float, float, HouseWireframe]:
    """(deflection, per-model timeout, house wireframe) the pool used: from dataset.json's config when present,
    else defaults."""
    deflection, timeout, houses = PoolConfig().deflection, RunnerConfig().timeout_s, PoolConfig().house_wireframe
    path = out_dir / "dataset.json"
    if path.is_file():
        try:
            config = json.loads(path.read_text()).get("config", {})
            deflection = float(config.get("pool", {}).get("deflection", deflection))
            timeout = float(config.get("runner", {}).get("timeout_s", timeout))
            houses = HouseWireframe(config.get("pool", {}).get("house_wireframe", houses))
        except (ValueError, AttributeError):
            pass  # an unreadable card: the defaults are what a default pool used
    return deflection, timeout, houses


def extra_wireframes(out_dir: Path, have: list[str], count: int, client) -> tuple[list[str], list[Wireframe]]:
    """Up to ``count`` more GT wireframes, extracted from usable models not in ``have`` (model id order)."""
    if count <= 0 or not shards.exists(out_dir / MODELS_FILE):
        return [], []
    known = set(have)
    models = [m for m in pool_models(out_dir, 0) if m.model_id not in known][:count]
    if not models:
        return [], []
    deflection, timeout, houses = _pool_settings(out_dir)
    units = [wireframe_unit(out_dir, m) for m in models]
    settings = WireframeSettings(stage=WIREFRAMES_STAGE, seed=0, out_dir=str(out_dir.resolve()), timeout_s=timeout,
                                 deflection=deflection, house_wireframe=houses)
    results = client.gather([client.submit(wireframe_task, u, settings, pure=False) for u in units])
    ok = [r.row for r in results if r.status == Status.OK and r.row.vertices is not None]
    return [str(r.model_id) for r in ok], [Wireframe.from_row(r.as_dict()) for r in ok]


def _long_table(cases: pd.DataFrame, low: pd.DataFrame, high: pd.DataFrame, paper_compat: bool) -> pd.DataFrame:
    """One row per (test, metric): category, pass rate and its bootstrap interval, applicable / passing /
    excluded wireframes, and the paper's rate."""
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
    table["n_excluded"] = table["test"].map(excluded_counts(cases)).astype("int64")
    table["pass_rate_low"] = [low.loc[t, m] for t, m in zip(table["test"], table["metric"])]
    table["pass_rate_high"] = [high.loc[t, m] for t, m in zip(table["test"], table["metric"])]
    table["paper_pass_rate"] = [paper_rate(t, m, paper_compat) for t, m in zip(table["test"], table["metric"])]
    ours, paper = table["pass_rate"] >= PASS_RATE, table["paper_pass_rate"] >= PASS_RATE
    table["differs_from_paper"] = table["paper_pass_rate"].notna() & table["pass_rate"].notna() & (ours != paper)
    differs = table["differs_from_paper"]
    found = [diagnose(t, m, paper_compat) if d else None for t, m, d in zip(table["test"], table["metric"], differs)]
    table["cause"] = [None if not d else (f.cause.value if f else UNEXPLAINED) for d, f in zip(differs, found)]
    table["why"] = [f.why if f else None for f in found]
    table["experiment"] = [f.experiment if f else None for f in found]
    table.insert(0, "category", table["test"].map(category))
    return table


def _test(out_dir: Path, ids, wireframes, models: int, seed: int, client, paper_compat: bool, progress: bool):
    """Top the wireframes up to ``models`` from the models table, then run every test on the client."""
    if progress and models > len(wireframes):
        print(f"spare-gen metric-report: extracting up to {models - len(wireframes)} more wireframes from the models",
              file=sys.stderr)
    more_ids, more = extra_wireframes(out_dir, ids, models - len(wireframes), client)
    ids, wireframes = ids + more_ids, wireframes + more
    if progress:
        print(f"spare-gen metric-report: testing {len(wireframes)} wireframes ({len(more)} extracted)", file=sys.stderr)
    cases = property_cases(wireframes, seed=seed, model_ids=ids, client=client, paper_compat=paper_compat,
                           progress=progress)
    return ids, wireframes, len(more), cases


def run(
    out_dir: Path,
    *,
    seed: int = 0,
    max_models: int | None = None,
    models: int = DEFAULT_MODELS,
    client=None,
    workers: int = 0,
    scheduler: str = "",
    quiet: bool = False,
    paper_compat: bool = False,
) -> dict:
    """Run the property report on the pool's GT wireframes (topped up to ``models`` from the models table);
    write the results, and (unless ``quiet``) show progress per wireframe, a short summary and what it wrote.
    ``max_models`` caps the pool's wireframes (and then adds none).

    ``paper_compat`` runs the tests by the paper's protocol (:mod:`spare_gen.metrics.properties`).
    Without ``client`` it runs on the Dask scheduler ``scheduler`` (``tcp://host:port``) when given, else on an
    embedded cluster of ``workers`` processes (0 = one per core).
    """
    out_dir = Path(out_dir)
    ids, wireframes = load_wireframes(out_dir / "wireframes.parquet", max_models)
    if not wireframes:
        raise ValueError(f"no wireframes to test in {out_dir / 'wireframes.parquet'}")
    target = 0 if max_models is not None else int(models)
    own = None if client is not None else open_client(scheduler, workers=workers, dashboard=False,
                                                       quiet=quiet or not scheduler,
                                                       shared=out_dir if scheduler else None)
    with own or contextlib.nullcontext(client) as active:
        ids, wireframes, n_extracted, cases = _test(out_dir, ids, wireframes, target, seed, active, paper_compat,
                                                    not quiet)
    rates = pass_rates(cases)
    low, high = bootstrap_intervals(cases, seed=seed)
    excluded = excluded_counts(cases)
    unsettled = int(((low < PASS_RATE) & (high >= PASS_RATE)).to_numpy().sum())
    n_cells = int(rates.notna().to_numpy().sum())
    markdown = (_title(len(wireframes), n_extracted, seed, paper_compat, unsettled, n_cells)
                + render_markdown(rates, low=low, high=high, compare_paper=True, excluded=excluded,
                                  paper_compat=paper_compat)
                + _assumptions(paper_compat))
    reports = out_dir / "reports"
    md_path = write_text(reports / MARKDOWN_NAME, markdown)
    long = _long_table(cases, low, high, paper_compat)
    pq_path = write_parquet(reports / PARQUET_NAME, pa.Table.from_pandas(long, preserve_index=False))
    result = _result(rates, excluded, len(wireframes), n_extracted, unsettled, md_path, pq_path, paper_compat)
    if not quiet:  # a short summary; the table is in the files
        counts = ", ".join(f"{m} {n}/{result['n_tests']}" for m, n in result["pass_counts"].items())
        print(f"spare-gen metric-report: {len(wireframes)} wireframes ({n_extracted} extracted), tests passed per metric: "
              f"{counts}; {unsettled} of {n_cells} verdicts not settled")
        print(f"spare-gen metric-report: wrote {md_path} and {pq_path}")
    return result


def _result(rates: pd.DataFrame, excluded, n_models: int, n_extracted: int, unsettled: int, md_path: Path,
            pq_path: Path, paper_compat: bool) -> dict:
    """What ``run`` returns: counts of passed tests per metric, unsettled, differing and unexplained cells."""
    passes = (rates >= PASS_RATE).sum(axis=0)
    return {
        "n_models": n_models,
        "n_extracted": n_extracted,
        "markdown_path": str(md_path),
        "parquet_path": str(pq_path),
        "pass_counts": {m: int(passes[m]) for m in rates.columns},
        "n_tests": len(rates),
        "unsettled_cells": unsettled,
        "excluded": {t: int(v) for t, v in excluded.items()},
        "paper_compat": bool(paper_compat),
        "differing_cells": len(differing_cells(rates, PASS_RATE, paper_compat)),
        "unexplained_cells": len(unexplained_cells(rates, PASS_RATE, paper_compat)),
    }


def _title(n_wireframes: int, n_extracted: int, seed: int, paper_compat: bool, unsettled: int, n_cells: int) -> str:
    """The report's heading and legend: what was tested, by which protocol, and how to read a cell."""
    size_note = (
        f" **Only {n_wireframes} wireframes: below the {RECOMMENDED_MODELS} we recommend, so many verdicts are "
        f"not settled; build the pool with `pool.models = 0` (every model) or at least {RECOMMENDED_MODELS}.**"
        if n_wireframes < RECOMMENDED_MODELS
        else ""
    )
    variants = (" beside the variant its numbers show: " + ", ".join(f"{v} for {m}" for m, v in PAPER_VARIANTS.items())
                if paper_compat else "")
    return (
        f"# Metric properties\n\nShare of {n_wireframes} GT wireframes ({n_wireframes - n_extracted} from "
        f"the pool, {n_extracted} extracted from further models) passing each test (seed {seed}; "
        f"{'the paper' if paper_compat else 'our'} protocol{', --paper-compat' if paper_compat else ''}); "
        f"bold = passed (>= {PASS_RATE:.0%}). [low–high] = 95 % bootstrap interval over the wireframes; "
        f"~ = the interval straddles {PASS_RATE:.0%}, so the verdict is not settled ({unsettled} of {n_cells} "
        f"cells).{size_note} P = the paper's Table 2 rate (128 house wireframes){variants}; ≠ = our verdict differs. "
        f"Monotonic tests run exactly {STEPS} steps; 'Excluded' counts wireframes with too few "
        "vertices/edges for them.\n\n"
    )


def _assumptions(paper_compat: bool) -> str:
    if not paper_compat:
        return ""
    assumptions = "".join(f"- {line}\n" for line in PAPER_ASSUMPTIONS)
    return f"\n### Assumptions where the paper gives no value\n\n{assumptions}"
