"""point_cloud_generation, child side: points sampled uniformly by area on a model's triangulated surface.

``sample_surface`` is trimesh's sampler driven by a passed Generator; ``model_points`` runs in the isolated
child (it reads the B-rep and tessellates it through spare_gen.cad).
"""

from __future__ import annotations

import time

import numpy as np
import trimesh

from spare_gen import cad
from spare_gen.cad.props import bounding_box
from spare_gen.cad.tessellate import triangulate
from spare_gen.config.tasks.point_cloud_generation import Options
from spare_gen.stages.questions.rejections import QuestionRejection
from spare_gen.stages.questions.settings import QuestionSettings, QuestionUnit

# Linear tessellation tolerance as a fraction of the bounding-box diagonal: points on curved faces lie
# within this distance of the exact surface.
DEFLECTION_FRACTION = 0.001


def sample_surface(vertices: np.ndarray, faces: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` points uniform by area on the triangles (trimesh's area-weighted sampler, driven by ``rng``)."""
    mesh = trimesh.Trimesh(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64), process=False)
    total = float(mesh.area) if len(mesh.faces) else 0.0
    if not total > 0:
        raise ValueError(f"cannot sample a surface of total area {total!r} ({len(mesh.faces)} triangles)")
    points, _ = trimesh.sample.sample_surface(mesh, count, seed=rng)
    return np.asarray(points, dtype=np.float64)


def points_unit(unit: QuestionUnit, settings: QuestionSettings, rng: np.random.Generator) -> dict:
    """The point-cloud task's child function."""
    return model_points(unit["shape_path"], settings.own(Options).point_cloud_points, rng)


def model_points(shape_path: str, count: int, rng: np.random.Generator) -> dict:
    """Tessellate the model and sample ``count`` points on its surface with ``rng``."""
    t0 = time.process_time()
    shape = cad.read_shape(shape_path)
    bbox = np.asarray(bounding_box(shape))
    deflection = DEFLECTION_FRACTION * max(float(np.linalg.norm(bbox[3:] - bbox[:3])), 1e-9)
    vertices, faces = triangulate(shape, deflection)
    t1 = time.process_time()
    if len(faces) == 0:
        return {"accepted": False, "rule": QuestionRejection.NO_SURFACE.value, "timings": {"tessellate": t1 - t0}}
    points = sample_surface(vertices, faces, count, rng)
    return {
        "accepted": True,
        "points": points.astype(np.float32).tolist(),
        "deflection": deflection,
        "n_triangles": int(len(faces)),
        "timings": {"tessellate": t1 - t0, "sample": time.process_time() - t1},
    }
