"""Test hooks: make a named unit hang or crash, to prove that isolation holds (config ``[debug]``)."""

from __future__ import annotations

import os
import time


def trigger(debug: dict | None, stage: str, unit_id: str) -> None:
    """Sleep forever or abort when ``unit_id`` (or ``stage:unit_id``) is listed in ``debug.hang``/``debug.crash``."""
    if not debug:
        return
    keys = {unit_id, f"{stage}:{unit_id}"}
    if keys & set(debug.get("crash", ())):
        os.abort()
    if keys & set(debug.get("hang", ())):
        while True:
            time.sleep(3600)
