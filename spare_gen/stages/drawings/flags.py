"""Quality flags of a model's drawings: blank views, tiny drawings and duplicate models."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from spare_gen.canvas.poses import FIXED_VIEWS, THREE_VIEWS
from spare_gen.runner.isolation import Status
from spare_gen.stages.drawings.schema import DrawingRow


def blank_views(view_rows: Iterable[dict]) -> list[str]:
    """Fixed views with no line at all (nothing to show a person or a network)."""
    return [r["view"] for r in view_rows if r["view"] in FIXED_VIEWS and r["n_visible"] + r["n_hidden"] == 0]


def tiny_views(view_rows: Iterable[dict], size: int, tiny_fraction: float) -> list[str]:
    """F, R or T drawings whose 2D extent is below ``tiny_fraction`` of the canvas side."""
    return [r["view"] for r in view_rows if r["view"] in THREE_VIEWS and r["extent"] < tiny_fraction * size]


def front_hash(view_rows: Iterable[dict]) -> str | None:
    """Hash of the front view's PNG (of its SVG when PNGs are off): equal hashes = identical drawings."""
    for r in view_rows:
        if r["view"] == "f":
            return r.get("png_sha256") or r.get("svg_sha256")
    return None


def is_usable(model_row: DrawingRow) -> bool:
    """Drawn (status ok), and none of its views blank or tiny, and not a duplicate of an earlier model."""
    return model_row.status == Status.OK and not (model_row.blank or model_row.tiny or model_row.duplicate)


def model_flags(view_rows: list[dict], size: int, tiny_fraction: float) -> dict:
    """Blank and tiny flags of one model (duplicates need every model: see ``assign_duplicate_flags``)."""
    blank, tiny = blank_views(view_rows), tiny_views(view_rows, size, tiny_fraction)
    return {
        "blank": bool(blank), "blank_views": blank, "tiny": bool(tiny), "tiny_views": tiny,
        "front_png_sha256": front_hash(view_rows), "duplicate": False, "duplicate_of": None,
    }


def duplicate_map(model_rows: Iterable[DrawingRow]) -> dict[str, str]:
    """model_id -> the earlier model (in model_id order) whose front view is identical, for each duplicate."""
    first_seen: dict[str, str] = {}
    duplicate_of: dict[str, str] = {}
    for row in sorted(model_rows, key=lambda r: str(r.model_id)):
        key = row.front_png_sha256
        if row.status != Status.OK or not key:
            continue
        if key in first_seen:
            duplicate_of[str(row.model_id)] = first_seen[key]
        else:
            first_seen[key] = str(row.model_id)
    return duplicate_of


def assign_duplicate_flags(model_rows: list[dict]) -> list[dict]:
    """Mark each drawn model whose front view is identical to an earlier one (in model_id order).

    Returns new rows (same order as given, every drawings.parquet column) with ``duplicate``, ``duplicate_of`` and
    ``usable`` set.
    """
    rows = [DrawingRow(**r) for r in model_rows]
    return [r.as_dict() for r in apply_duplicates(rows, duplicate_map(rows))]


def apply_duplicates(model_rows: list[DrawingRow], duplicate_of: dict[str, str]) -> list[DrawingRow]:
    """New rows with ``duplicate``, ``duplicate_of`` (from ``duplicate_map``) and ``usable`` set."""
    out = []
    for row in model_rows:
        original = duplicate_of.get(str(row.model_id))
        new = replace(row, duplicate=original is not None, duplicate_of=original)
        out.append(replace(new, usable=is_usable(new)))
    return out
