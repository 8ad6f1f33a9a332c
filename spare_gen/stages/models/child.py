"""Model stage, child side: build or load one model, reject degenerate CSG (and CSG whose STEP copy reads back as
another solid), write STEP and BREP, describe it.

These functions run inside the killable child process (they call OpenCASCADE through spare_gen.cad).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from enum import Enum
from pathlib import Path

import numpy as np

from spare_gen import cad
from spare_gen.cad import props, repair
from spare_gen.cad.props import is_valid, solids_and_volume
from spare_gen.filehash import sha256_file
from spare_gen.config.schema import Footprint, RoofType
from spare_gen.stages.models.csg import primitives_volume, random_program
from spare_gen.stages.models.files import link_target
from spare_gen.stages.models.houses import convex_parts, random_house
from spare_gen.stages.models.quality import assess
from spare_gen.stages.models.settings import ModelSettings, ModelUnit
from spare_gen.stage_table import MODELS


class Rejection(str, Enum):
    """Named degeneracy rules for random CSG models (counted per model, as CLEVR counts its rejections)."""

    BOOLEAN_FAILED = "boolean_failed"
    EMPTY = "empty"
    DISCONNECTED = "disconnected"
    TINY_VOLUME = "tiny_volume"
    INVALID_BREP = "invalid_brep"
    STEP_ROUNDTRIP = "step_roundtrip"  # the STEP copy reads back as another solid (volume differs)


STEP_VOLUME_RTOL = 1e-3  # the STEP copy's volume may differ from the shape's by this fraction (tolerances)


def step_copy_differs(shape_volume: float, step_path: Path) -> bool:
    """True if the STEP file reads back as a different solid than the one written (its volume differs).

    OCCT's STEP write and read of some seamed faces (tori, spheres) return a solid with a face turned
    inside out: measured on random CSG models, 1 in 12-20 reads back with a different volume (e.g. 0.353
    written, 0.024 read). The drawings come from the BREP copy, so such a model's STEP file would show
    users (and any tool reading the STEP, as the original SPARE3D scripts did) another shape.
    """
    return abs(props.volume(cad.read_shape(step_path)) - shape_volume) > STEP_VOLUME_RTOL * max(abs(shape_volume), 1e-12)


def model_paths(out_dir: str, model_id: str) -> tuple[Path, Path]:
    base = Path(out_dir) / MODELS.folder
    return base / f"{model_id}.step", base / f"{model_id}.brep"


def write_model_files(shape, out_dir: str, model_id: str, timing: dict | None = None) -> dict:
    """STEP (for users) and BREP (exact, for later stages), with their paths and content hashes.

    ``timing`` (if given) gains the CPU seconds of the STEP and BREP writes and of hashing.
    """
    step, brep = model_paths(out_dir, model_id)
    clock = _Clock(timing if timing is not None else {})
    data = cad.write_step(shape, step, name=model_id)
    clock.lap("step")
    cad.write_brep(shape, brep)
    clock.lap("brep")
    files = {"step_path": f"models/{step.name}", "step_sha256": hashlib.sha256(data).hexdigest(),
             "brep_path": f"models/{brep.name}", "brep_sha256": sha256_file(brep)}
    clock.lap("hash")
    return files


class _Clock:
    """Adds the CPU seconds since its last lap to ``totals[name]`` (time.process_time: this process only)."""

    def __init__(self, totals: dict) -> None:
        self.totals, self.t = totals, time.process_time()

    def restart(self) -> None:
        """Start the next lap now (time spent since the last lap is counted elsewhere)."""
        self.t = time.process_time()

    def lap(self, name: str, now: float | None = None) -> None:
        now = time.process_time() if now is None else now
        self.totals[name] = self.totals.get(name, 0.0) + now - self.t
        self.t = now


def check_csg(shape, program: dict, min_volume_fraction: float) -> tuple[Rejection | None, dict]:
    """The rules in their fixed order (empty, disconnected, tiny volume, invalid B-rep), measured cheapest first.

    Solids and volume come first, BRepCheck only for a shape that passes them, and the full row statistics
    only for a shape that passes every rule; a rejected shape's stats hold what was measured.
    """
    n_solids, volume = solids_and_volume(shape)
    stats = {"n_solids": n_solids, "volume": volume}
    if n_solids == 0 or volume <= 1e-9:
        return Rejection.EMPTY, stats
    if n_solids > 1:
        return Rejection.DISCONNECTED, stats
    if volume < min_volume_fraction * primitives_volume(program):
        return Rejection.TINY_VOLUME, stats
    stats["valid"] = is_valid(shape)
    if not stats["valid"]:
        return Rejection.INVALID_BREP, stats
    return None, cad.shape_stats(shape, known=stats)


def make_csg_model(unit: ModelUnit, settings: ModelSettings, rng: np.random.Generator) -> dict:
    """Draw CSG programs of ``unit["n_primitives"]`` primitives from ``rng`` until one passes every rule.

    ``timing`` (kept out of the tables) holds the CPU seconds of: building the accepted model (``build``),
    checking it (``check``), building and checking rejected attempts (``rejected``), the writes, and reading
    the STEP copy back (``step_check``; an attempt rejected there counts its build and check as usual).
    """
    model_id, n_primitives, csg = unit["model_id"], unit["n_primitives"], settings.csg
    rejections: Counter[str] = Counter()
    timing: dict[str, float] = {}
    clock = _Clock(timing)
    for attempt in range(csg.max_attempts):
        program = random_program(n_primitives, rng)
        try:
            shape = cad.build_csg(program)
        except Exception:
            rejections[Rejection.BOOLEAN_FAILED.value] += 1
            clock.lap("rejected")
            continue
        built = time.process_time()
        reason, stats = check_csg(shape, program, csg.min_volume_fraction)
        if reason is not None:
            rejections[reason.value] += 1
            clock.lap("rejected")
            continue
        clock.lap("build", now=built)
        clock.lap("check")
        files = write_model_files(shape, settings.out_dir, model_id, timing)
        clock.restart()
        differs = step_copy_differs(stats["volume"], Path(settings.out_dir) / files["step_path"])
        clock.lap("step_check")
        if differs:
            rejections[Rejection.STEP_ROUNDTRIP.value] += 1  # the next attempt's files replace these
            continue
        return {
            "csg": json.dumps(program, sort_keys=True),
            "attempts": attempt + 1,
            "rejections": json.dumps(dict(sorted(rejections.items()))),
            **files,
            **stats,
            "timing": {k: round(v, 5) for k, v in timing.items()},
        }
    raise RuntimeError(
        f"no valid CSG model with {n_primitives} primitives after {csg.max_attempts} attempts "
        f"(rejections: {dict(sorted(rejections.items()))})"
    )


def make_house_model(unit: ModelUnit, settings: ModelSettings, rng: np.random.Generator) -> dict:
    """Draw one house of the unit's footprint and roof type from ``rng``, build it, and check it is one valid solid."""
    house = random_house(Footprint(unit["footprint"]), RoofType(unit["roof"]), rng, settings.houses)
    shape = cad.build_house(convex_parts(house))
    n_solids, volume = solids_and_volume(shape)
    if n_solids != 1 or volume <= 1e-9 or not is_valid(shape):
        raise cad.HouseError(f"house {unit['model_id']} ({unit['footprint']}, {unit['roof']} roof) is not one valid "
                             f"solid ({n_solids} solids, volume {volume:.3g})")
    stats = cad.shape_stats(shape, known={"n_solids": n_solids, "volume": volume, "valid": True})
    files = write_model_files(shape, settings.out_dir, unit["model_id"])
    return {"house": json.dumps(house, sort_keys=True), **files, **stats}


def load_file_model(unit: ModelUnit, settings: ModelSettings, rng: np.random.Generator) -> dict:
    """Read one CAD file and store it as STEP (for users) and BREP (exact and fast, for later stages).

    A shape that contradicts itself is repaired first (``cad.repair``): faces without edges are rebuilt on their
    surfaces' natural bounds, solids turned inside out (negative volume) are reversed, and the repair is named in
    ``quality_reason``. What cannot be repaired (faces still without edges, a box of zero size where OCCT's loose
    box is not) fails the file with one line: models.parquet never records a box or volume the shape contradicts.
    """
    try:
        return _load_file(unit, settings)
    except cad.CadReadError as exc:
        target = link_target(unit["source_path"])  # a link's row keeps its own name, its error names the target
        if not target:
            raise
        raise cad.CadReadError(f"{exc}; {Path(unit['source_path']).name} is a symbolic link to {target!r}") from None


def _load_file(unit: ModelUnit, settings: ModelSettings) -> dict:
    model_id, path = unit["model_id"], unit["source_path"]
    name = Path(path).name
    shape = cad.read_shape(path)
    shape, notes = repaired_shape(shape, name)
    stats = cad.shape_stats(shape)
    if stats["n_faces"] == 0:
        raise cad.CadReadError(f"{name}: the file holds no faces (nothing to draw)")
    contradiction = shape_contradiction(shape, stats)
    if contradiction:
        raise cad.CadReadError(f"{name}: {contradiction}")
    quality, reason = assess(stats["valid"], stats["n_solids"], cad.solid_groups(shape))
    return {**write_model_files(shape, settings.out_dir, model_id), **stats, "quality": quality,
            "quality_reason": "; ".join([reason] * bool(reason) + notes)}


def repaired_shape(shape, name: str) -> tuple[object, list[str]]:
    """``shape`` with edgeless faces rebuilt and inverted solids reversed, and one note per repair made."""
    notes = []
    edgeless = repair.edgeless_faces(shape)
    if edgeless:
        shape, lost = repair.rebuild_edgeless_faces(shape)
        if lost:
            raise cad.CadReadError(f"{name}: {edgeless} face(s) carry no edges and {lost} of them lie on unbounded "
                                   "surfaces, so no boundary can be rebuilt (nothing to draw)")
        notes.append(f"{edgeless} face(s) without edges rebuilt on their surfaces' natural bounds")
    shape, inverted = repair.outward_solids(shape)
    if inverted:
        notes.append(f"{inverted} solid(s) turned inside out (negative volume) stored reversed")
    return shape, notes


def shape_contradiction(shape, stats: dict) -> str:
    """Why the measured ``stats`` cannot describe ``shape`` ("" if they may): no edges on faces, a box of zero size
    while OCCT's loose box is not, a negative volume of solids."""
    if stats["n_edges"] == 0:
        return f"its {stats['n_faces']} face(s) carry no edges (nothing to draw)"
    size = np.subtract(stats["bbox_max"], stats["bbox_min"])
    loose = props.brep_bounding_box(shape)
    if loose is not None and not size.any() and np.subtract(loose[3:], loose[:3]).any():
        extent = " x ".join(f"{v:.4g}" for v in np.subtract(loose[3:], loose[:3]))
        return f"its tight bounding box has zero size while OCCT's loose box is {extent} (the B-rep contradicts itself)"
    if stats["n_solids"] and stats["volume"] < 0:
        return f"its solids enclose a negative volume ({stats['volume']:.6g}) even after reversing inverted ones"
    return ""
