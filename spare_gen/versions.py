"""Versions of spare_gen and the libraries that shape its output, recorded in every dataset.json."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

PACKAGES = ("spare_gen", "cadquery-ocp-novtk", "numpy", "scipy", "trimesh", "pyarrow", "pillow", "svgwrite",
            "dask", "distributed", "pandas")


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    out["occt"] = out["cadquery-ocp-novtk"]
    return out
