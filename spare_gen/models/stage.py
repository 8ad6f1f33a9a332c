"""Model stage, child side: build or load one model, reject degenerate CSG, write STEP and BREP, describe it.

These functions run inside the killable child process (they call OpenCASCADE through spare_gen.cad).
"""

from __future__ import annotations

import json
from collections import Counter
from enum import Enum
from pathlib import Path

import numpy as np

from spare_gen import cad
from spare_gen.filehash import sha256_file
from spare_gen.models.csg import primitives_volume, random_program
from spare_gen.models.quality import assess
from spare_gen.models.settings import ModelSettings


class Rejection(str, Enum):
    """Named degeneracy rules for random CSG models (counted per model, as CLEVR counts its rejections)."""

    BOOLEAN_FAILED = "boolean_failed"
    EMPTY = "empty"
    DISCONNECTED = "disconnected"
    TINY_VOLUME = "tiny_volume"
    INVALID_BREP = "invalid_brep"


def model_paths(out_dir: str, model_id: str) -> tuple[Path, Path]:
    base = Path(out_dir) / "models"
    return base / f"{model_id}.step", base / f"{model_id}.brep"


def write_model_files(shape, out_dir: str, model_id: str) -> dict:
    """STEP (for users) and BREP (exact, for later stages), with their paths and content hashes."""
    step, brep = model_paths(out_dir, model_id)
    cad.write_step(shape, step, name=model_id)
    cad.write_brep(shape, brep)
    return {"step_path": f"models/{step.name}", "step_sha256": sha256_file(step),
            "brep_path": f"models/{brep.name}", "brep_sha256": sha256_file(brep)}


def check_csg(shape, program: dict, min_volume_fraction: float) -> tuple[Rejection | None, dict]:
    stats = cad.shape_stats(shape)
    if stats["n_solids"] == 0 or stats["volume"] <= 1e-9:
        return Rejection.EMPTY, stats
    if stats["n_solids"] > 1:
        return Rejection.DISCONNECTED, stats
    if stats["volume"] < min_volume_fraction * primitives_volume(program):
        return Rejection.TINY_VOLUME, stats
    if not stats["valid"]:
        return Rejection.INVALID_BREP, stats
    return None, stats


def make_csg_model(unit: dict, settings: ModelSettings, rng: np.random.Generator) -> dict:
    """Draw CSG programs of ``unit["n_primitives"]`` primitives from ``rng`` until one passes every rule."""
    model_id, n_primitives, csg = unit["model_id"], unit["n_primitives"], settings.csg
    rejections: Counter[str] = Counter()
    for attempt in range(csg.max_attempts):
        program = random_program(n_primitives, rng)
        try:
            shape = cad.build_csg(program)
        except Exception:
            rejections[Rejection.BOOLEAN_FAILED.value] += 1
            continue
        reason, stats = check_csg(shape, program, csg.min_volume_fraction)
        if reason is not None:
            rejections[reason.value] += 1
            continue
        return {
            "csg": json.dumps(program, sort_keys=True),
            "attempts": attempt + 1,
            "rejections": json.dumps(dict(sorted(rejections.items()))),
            **write_model_files(shape, settings.out_dir, model_id),
            **stats,
        }
    raise RuntimeError(
        f"no valid CSG model with {n_primitives} primitives after {csg.max_attempts} attempts "
        f"(rejections: {dict(sorted(rejections.items()))})"
    )


def load_file_model(unit: dict, settings: ModelSettings, rng: np.random.Generator) -> dict:
    """Read one CAD file and store it as STEP (for users) and BREP (exact and fast, for later stages)."""
    model_id, path = unit["model_id"], unit["source_path"]
    shape = cad.read_shape(path)
    stats = cad.shape_stats(shape)
    if stats["n_faces"] == 0:
        raise cad.CadReadError(f"{Path(path).name}: the file holds no faces (nothing to draw)")
    quality, reason = assess(stats["valid"], stats["n_solids"], cad.solid_groups(shape))
    return {**write_model_files(shape, settings.out_dir, model_id), **stats, "quality": quality,
            "quality_reason": reason}
