"""Using a generated dataset: loaders (numpy; ``spare_gen.data.torch`` for PyTorch), scoring and pose scoring."""

from __future__ import annotations

from spare_gen.lazy import lazy_exports

_HOMES = {  # each public name and its module, imported when first used (`spare-gen cache --help` needs none)
    "Source": "spare_gen.data.loaders",
    "iter_questions": "spare_gen.data.loaders",
    "read_image": "spare_gen.data.loaders",
    "DrawingVectors": "spare_gen.data.tables",
    "load_split": "spare_gen.data.tables",
    "load_split_pandas": "spare_gen.data.tables",
}

__all__ = sorted(_HOMES)

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
