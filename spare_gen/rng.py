"""Random generators derived from (seed, item, stage): the only source of randomness in spare_gen.

Never use global random state: every random choice takes a generator made here, so a result
depends only on the config seed and the names of the work unit, never on worker count or order.
"""

from __future__ import annotations

import hashlib

import numpy as np


def derive_seed(seed: int, *keys: object) -> int:
    """A 64-bit integer seed from a base seed and any keys (strings, ints), stable across runs and machines."""
    text = "\x1f".join([str(int(seed))] + [str(k) for k in keys])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def derive_rng(seed: int, *keys: object) -> np.random.Generator:
    """A fresh PCG64 generator for (seed, *keys), e.g. ``derive_rng(seed, "csg", model_index)``."""
    return np.random.Generator(np.random.PCG64(derive_seed(seed, *keys)))
