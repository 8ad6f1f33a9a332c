"""What a task's per-model unit reads, added to each unit before it is sent to a worker (shared by the tasks)."""

from __future__ import annotations

from pathlib import Path

from spare_gen.drawings.poses import ISOMETRIC_VIEWS
from spare_gen.questions.inputs import Inputs, load_polylines


def isometric_polylines(units: list[dict], inputs: Inputs, out: Path) -> None:
    """``views``: the model's isometric drawings as polylines (the pose tasks' symmetry checks)."""
    polylines = load_polylines(out, [u["model_id"] for u in units], ISOMETRIC_VIEWS)
    for u in units:
        u["views"] = polylines.get(u["model_id"], {})


def shape_and_framing(units: list[dict], inputs: Inputs, out: Path) -> None:
    """``shape_path`` (absolute B-rep path), ``framing`` and ``hlr_method`` of the model (work in the child)."""
    for u in units:
        u["shape_path"] = str((out / inputs.brep[u["model_id"]]).resolve())
        u.update(inputs.framing[u["model_id"]])
