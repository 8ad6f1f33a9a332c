"""Versions of spare_gen and of every library that decides its output bytes, recorded in dataset.json."""

from __future__ import annotations

import functools
import platform
from importlib.metadata import PackageNotFoundError, version

# OCCT (geometry, HLR, STEP), numpy/scipy/trimesh (numbers, sampling), pyarrow (+ its zstd) Parquet bytes,
# pillow + aggdraw PNG bytes, pandas (tables built through it), dask/distributed (none, recorded for support).
PACKAGES = ("spare_gen", "cadquery-ocp-novtk", "numpy", "scipy", "trimesh", "pyarrow", "pillow", "aggdraw",
            "pandas", "dask", "distributed")


def package_versions() -> dict[str, str]:
    """package -> installed version (a fresh dict; looked up once per process)."""
    return dict(_versions())


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
