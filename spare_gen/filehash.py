"""Content hashes of files (SHA-256, streamed), used for de-duplication and dataset manifests."""

from __future__ import annotations

import hashlib
import os


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
