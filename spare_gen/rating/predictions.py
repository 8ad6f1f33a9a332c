"""Any method's predicted wireframes as pool candidates (the paper's Pool 1), next to the corruptions.

Layout and format (:data:`PREDICTIONS_FORMAT`): one folder per method under the predictions folder,
one file per pool model in it. Each prediction becomes a candidate of kind ``method:<name>`` (no
severity), scored with every metric, drawn like the corruptions and paired with them, so
``spare-gen rank`` ranks methods and corruption types together (the paper's Table 1). A file that
cannot be read becomes a failed candidate row whose error names the file and the problem; the rest
of the pool goes on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from spare_gen.config.schema import PredictionUnits
from spare_gen.wireframe import KIND_NAMES, Wireframe

METHOD_PREFIX = "method:"
SUFFIXES = (".json", ".obj")
METHOD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


PREDICTIONS_FORMAT = """\
Predictions (`spare-gen pool --predictions DIR`, or `pool.predictions = "DIR"` in the config):
    DIR/<method>/<model_id>.json   {"vertices": [[x, y, z], ...], "edges": [[i, j], ...],
                                    "vertex_kinds": [0 | 1 | 2 | 3, ...]}   (vertex_kinds optional)
    DIR/<method>/<model_id>.obj    lines `v x y z` and `l i j [k ...]` (1-based, a polyline per line)
one folder per method (its name: letters, digits, `_ . + -`), one file per pool model (the model_id of
models.parquet); edges are undirected pairs of 0-based vertex indices (JSON); a vertex's kind is 0 for a
corner, 1 for an inner point of a curved edge, 2 for a roof ridge and 3 for an eave vertex (without
kinds, every vertex is a corner, which matters to the corner metrics only while they compare corners
alone). Coordinates are the CAD model's own (`pool.prediction_units = "model"`, the default) or the
ground truth's normalised ones
(`"normalised"`: bounding-box centre at 0, diagonal 1, as in wireframes.parquet and the geometry
files). Each prediction becomes the candidate `method:<method>` of its model; a model without a file
simply has no candidate of that method. A file that cannot be read is reported on one line and kept as
a failed row of corruptions.parquet (status failed, error naming the problem).
"""


@dataclass(frozen=True)
class PredictionFile:
    method: str
    model_id: str
    path: str

    @property
    def kind(self) -> str:
        return f"{METHOD_PREFIX}{self.method}"


def discover(folder: str | Path, model_ids: set[str]) -> tuple[list[PredictionFile], list[str]]:
    """Prediction files of the pool's models, and one problem line per file or folder that cannot be used."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"predictions folder {str(folder)!r} does not exist or is not a folder")
    found, problems = [], []
    for method_dir in sorted(p for p in folder.iterdir()):
        if not method_dir.is_dir():
            problems.append(f"{method_dir}: not a method folder (expected {folder}/<method>/<model_id>.json)")
            continue
        if not METHOD_NAME.fullmatch(method_dir.name):
            problems.append(f"{method_dir}: method name {method_dir.name!r} may use only letters, digits and _.+-")
            continue
        for path in sorted(method_dir.iterdir()):
            if path.suffix.lower() not in SUFFIXES:
                problems.append(f"{path}: unknown prediction file type; use {' or '.join(SUFFIXES)}")
            elif path.stem not in model_ids:
                problems.append(f"{path}: model {path.stem!r} is not in the pool")
            else:
                found.append(PredictionFile(method_dir.name, path.stem, str(path)))
    stems = [(f.method, f.model_id) for f in found]
    twice = sorted({s for s in stems if stems.count(s) > 1})
    if twice:
        problems += [f"{folder / m}: model {i!r} has both a .json and an .obj prediction; both ignored"
                     for m, i in twice]  # fmt: skip
        found = [f for f in found if (f.method, f.model_id) not in twice]
    return found, problems


def _read_json(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    if not isinstance(body, dict) or "vertices" not in body or "edges" not in body:
        raise ValueError('expected a JSON object with "vertices" and "edges"')
    try:
        vertices = np.asarray(body["vertices"], dtype=np.float64)
        edges = np.asarray(body["edges"], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("vertices must be [x, y, z] numbers and edges [i, j] integers") from None
    if vertices.size and (vertices.ndim != 2 or vertices.shape[1] != 3):
        raise ValueError(f"vertices must be a list of [x, y, z], got shape {vertices.shape}")
    if edges.size and (edges.ndim != 2 or edges.shape[1] != 2 or np.any(edges != np.round(edges))):
        raise ValueError("edges must be a list of [i, j] integer pairs")
    kinds = body.get("vertex_kinds")
    if kinds is not None:
        kinds = np.asarray(kinds)
        if kinds.shape != (len(vertices),) or not np.isin(kinds, list(KIND_NAMES)).all():
            raise ValueError(f"vertex_kinds must be one of {sorted(KIND_NAMES)} per vertex ({len(vertices)})")
    return vertices.reshape(-1, 3), edges.reshape(-1, 2).astype(np.int64), kinds


def _read_obj(path: Path) -> tuple[np.ndarray, np.ndarray, None]:
    vertices, edges = [], []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        try:
            if fields[0] == "v":
                vertices.append([float(x) for x in fields[1:4]] if len(fields) >= 4 else None)
                if vertices[-1] is None:
                    raise ValueError
            elif fields[0] == "l":
                ids = [int(x.split("/")[0]) - 1 for x in fields[1:]]
                edges += list(zip(ids[:-1], ids[1:]))
        except ValueError:
            raise ValueError(f"line {number}: cannot read {line.strip()!r}") from None
    return np.asarray(vertices, dtype=np.float64).reshape(-1, 3), np.asarray(edges, dtype=np.int64).reshape(-1, 2), None


def read_prediction(path: str | Path, units: PredictionUnits, centre, scale: float | None) -> Wireframe:
    """The prediction in the ground truth's normalised coordinates (``scale`` is needed in model units only);
    ``ValueError`` names the problem."""
    path = Path(path)
    vertices, edges, kinds = (_read_json if path.suffix.lower() == ".json" else _read_obj)(path)
    if PredictionUnits(units) is PredictionUnits.MODEL:
        if scale is None:  # the caller's error, not the file's: not a ValueError
            raise TypeError("predictions in model units need the ground truth's scale")
        vertices = (vertices - np.asarray(centre, dtype=np.float64)) / float(scale)
    wf = Wireframe(vertices, edges, kinds)  # no kinds: every vertex is a corner
    wf.validate()
    if wf.n_edges and np.any(wf.edges[:, 0] == wf.edges[:, 1]):
        wf = Wireframe(wf.vertices, wf.edges[wf.edges[:, 0] != wf.edges[:, 1]], wf.kinds)  # drop self-loops
    return wf
