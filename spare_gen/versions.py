"""Versions of spare_gen and of every library that decides its output bytes, recorded in dataset.json."""

from __future__ import annotations

import functools
import platform
from importlib.metadata import PackageNotFoundError, version

# OCCT (geometry, HLR, STEP), numpy/scipy/trimesh (numbers, sampling), pyarrow (+ its zstd) Parquet bytes,
# pillow + aggdraw PNG bytes, pandas (tables built through it), dask/distributed (none, recorded for support).
PACKAGES = ("spare_gen", "cadquery-ocp-novtk", "numpy", "scipy", "trimesh", "pyarrow", "pillow", "aggdraw",
            "pandas", "dask", "distributed")
# Recorded, but never a reason to recompute: they place and schedule the work, and the same config gives the same
# bytes on 1 worker, 2 workers or a cluster (docs/guide/guarantees.md), so another version cannot change them.
SCHEDULING_ONLY = ("dask", "distributed")


def package_versions() -> dict[str, str]:
    """package -> installed version (a fresh dict; looked up once per process)."""
    return dict(_versions())


def output_versions(versions: dict[str, str]) -> dict[str, str]:
    """``versions`` less the packages that cannot change the output's bytes (``SCHEDULING_ONLY``)."""
    return {name: v for name, v in versions.items() if name not in SCHEDULING_ONLY}


def version_changes(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """``package old -> new`` for every output-deciding package whose version differs (or came, or went)."""
    before, now = output_versions(before), output_versions(now)
    return [f"{name} {before.get(name, 'none')} -> {now.get(name, 'none')}"
            for name in sorted(set(before) | set(now)) if before.get(name) != now.get(name)]


@functools.cache
def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    out["occt"] = out["cadquery-ocp-novtk"]
    return out
