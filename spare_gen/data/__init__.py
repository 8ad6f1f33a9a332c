"""Using a generated dataset: loaders (numpy; ``spare_gen.data.torch`` for PyTorch), scoring and pose scoring."""

from __future__ import annotations

from spare_gen.lazy import lazy_exports

# each submodule and its public names, imported when first used (`spare-gen cache --help` needs none)
_MODULES = {
    "loaders": ("Source", "iter_questions", "read_image"),
    "tables": ("DrawingVectors", "load_rows", "load_split", "load_split_pandas"),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES)
