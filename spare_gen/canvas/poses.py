"""The 11 SPARE3D viewing poses (F, R, T and isometric 1-8) and random cameras, as plain numpy.

A pose is an OCCT projector ``gp_Ax2(origin, N, Vx)``: the viewer looks from direction ``N`` towards
the origin, ``Vx`` is the image x axis (right) and image up is ``N x Vx``. F looks from -Y with +Z up,
R from +X with +Z up, T from +Z with +Y up; isometric pose ``k`` sits on corner ``k`` of the cube of
SPARE3D Figure 2 (pose 2 = front-top-right, the paper's conventional isometric view).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from spare_gen.canvas.views import FIXED_VIEWS, ISOMETRIC_VIEWS, RANDOM_VIEW_PREFIX, THREE_VIEWS, VIEWS  # noqa: F401

# name: (N towards the viewer, Vx image right), both before normalisation.
POSE_TABLE: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    "f": ((0, -1, 0), (1, 0, 0)),
    "r": ((1, 0, 0), (0, 1, 0)),
    "t": ((0, 0, 1), (1, 0, 0)),
    "1": ((-1, -1, 1), (1, -1, 0)),
    "2": ((1, -1, 1), (1, 1, 0)),
    "3": ((1, 1, 1), (-1, 1, 0)),
    "4": ((-1, 1, 1), (-1, -1, 0)),
    "5": ((-1, -1, -1), (1, -1, 0)),
    "6": ((1, -1, -1), (1, 1, 0)),
    "7": ((1, 1, -1), (-1, 1, 0)),
    "8": ((-1, 1, -1), (-1, -1, 0)),
}


@dataclass(frozen=True)
class Pose:
    """An orthographic view: unit vectors towards the viewer (``direction``), image right and image up."""

    name: str
    direction: tuple[float, float, float]
    x_direction: tuple[float, float, float]

    @cached_property
    def up(self) -> np.ndarray:
        return np.cross(self.direction, self.x_direction)

    @cached_property
    def _image_axes(self) -> np.ndarray:
        return np.stack([np.asarray(self.x_direction), self.up]).T

    def rotation(self) -> np.ndarray:
        """World-to-camera rotation, rows (right, up, towards viewer): an OpenGL camera looking along -z."""
        return np.stack([np.asarray(self.x_direction), self.up, np.asarray(self.direction)])

    def project(self, points: np.ndarray) -> np.ndarray:
        """(n, 3) model points to (n, 2) image-plane coordinates (x right, y up, model units)."""
        return np.asarray(points, dtype=float) @ self._image_axes


def _unit(v) -> tuple[float, float, float]:
    a = np.asarray(v, dtype=float)
    n = np.linalg.norm(a)
    if n == 0:
        raise ValueError(f"zero-length direction {tuple(v)!r}")
    return tuple(float(x) for x in a / n)


@lru_cache(maxsize=None)
def pose(name: str) -> Pose:
    """One of the 11 fixed SPARE3D poses by name (f, r, t, 1..8); the same (immutable) object every call."""
    if name not in POSE_TABLE:
        raise ValueError(f"unknown view {name!r}; choose from {', '.join(FIXED_VIEWS)}")
    n, vx = POSE_TABLE[name]
    return Pose(name, _unit(n), _unit(vx))


def fixed_poses() -> list[Pose]:
    return [pose(v) for v in FIXED_VIEWS]


def random_pose(name: str, rng: np.random.Generator) -> Pose:
    """A viewpoint uniform on the view sphere with a uniform roll of the image axes about it."""
    while True:  # a normalised Gaussian is uniform on the sphere; re-draw the (measure-zero) tiny vector
        n = rng.standard_normal(3)
        if np.linalg.norm(n) > 1e-6:
            break
    n = np.asarray(_unit(n))
    helper = np.array([0.0, 0.0, 1.0]) if abs(n[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    e1 = np.cross(helper, n)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    roll = rng.uniform(0.0, 2.0 * np.pi)
    vx = np.cos(roll) * e1 + np.sin(roll) * e2
    return Pose(name, _unit(n), _unit(vx))


def random_poses(count: int, rng: np.random.Generator) -> list[Pose]:
    return [random_pose(f"{RANDOM_VIEW_PREFIX}{i:03d}", rng) for i in range(count)]


def bbox_corners(bbox: tuple[float, ...] | np.ndarray) -> np.ndarray:
    """The 8 corners of an (xmin, ymin, zmin, xmax, ymax, zmax) box."""
    lo, hi = np.asarray(bbox[:3], dtype=float), np.asarray(bbox[3:], dtype=float)
    idx = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)])
    return np.where(idx == 0, lo, hi)


def projected_extent(bbox, poses: list[Pose]) -> float:
    """Largest width or height of the box's projection over ``poses`` (model units)."""
    corners = bbox_corners(bbox)
    return max(float(np.ptp(p.project(corners), axis=0).max()) for p in poses)


@dataclass(frozen=True)
class Framing:
    """One scale per model: canvas px = size/2 + scale * (projected - centre), y flipped.

    The centre is the projected 3D bounding-box centre in every view, or with ``per_view`` (the SPARE3D rule)
    the centre of the 2D box of the view's own polylines.
    """

    size: int
    scale: float  # canvas pixels per model unit
    center: tuple[float, float, float]  # 3D bounding-box centre, drawn at the canvas centre in every view
    per_view: bool = False

    def view_center(self, pose_: Pose, xy: np.ndarray | None = None) -> np.ndarray:
        """The image-plane point drawn at the canvas centre, for a view whose polyline points are ``xy``."""
        if self.per_view and xy is not None and len(xy):
            xy = np.asarray(xy, dtype=float)
            return (xy.min(axis=0) + xy.max(axis=0)) / 2.0
        return pose_.project(np.asarray(self.center)[None, :])[0]

    def to_canvas(self, pose_: Pose, xy: np.ndarray) -> np.ndarray:
        """(n, 2) image-plane points of ``pose_`` (all of one view's points) to canvas pixels (x right, y down)."""
        c2 = self.view_center(pose_, xy)
        out = np.empty_like(np.asarray(xy, dtype=float))
        out[:, 0] = self.size / 2.0 + self.scale * (xy[:, 0] - c2[0])
        out[:, 1] = self.size / 2.0 - self.scale * (xy[:, 1] - c2[1])
        return out

    def center2d(self, pose_: Pose, xy: np.ndarray | None = None) -> list[float]:
        return [float(v) for v in self.view_center(pose_, xy)]


def framing_for(bbox, size: int, margin: float, viewbox_factor: float | None = None,
                per_view: bool = False, viewbox_box=None) -> Framing:
    """Scale so ``margin`` x the largest projected extent over the 11 poses fills the canvas side.

    The scale is also capped so the bounding-box diagonal fits the canvas, so no view of the model,
    fixed or random, can be clipped. An empty box gives scale 1 around the origin. With
    ``viewbox_factor`` (the SPARE3D rule) the canvas side is instead that factor x the largest edge of
    ``viewbox_box`` (default: ``bbox``); ``per_view`` centres each view on its own lines.
    """
    bbox = np.asarray(bbox, dtype=float)
    diag = float(np.linalg.norm(bbox[3:] - bbox[:3]))
    if not np.all(np.isfinite(bbox)) or diag <= 0.0:
        return Framing(size, 1.0, (0.0, 0.0, 0.0), per_view)
    if viewbox_factor:
        sides = np.asarray(bbox if viewbox_box is None else viewbox_box, dtype=float)
        scale = size / (viewbox_factor * float(np.max(sides[3:] - sides[:3])))
    else:
        extent = projected_extent(bbox, fixed_poses())
        scale = min(size / (margin * max(extent, 1e-300)), size / diag)
    center = tuple(float(v) for v in (bbox[:3] + bbox[3:]) / 2.0)
    return Framing(size, float(scale), center, per_view)


def camera_position(framing: Framing, pose_: Pose, bbox) -> list[float]:
    """Camera centre for a pose: on the sphere of radius = bbox diagonal around the bbox centre."""
    bbox = np.asarray(bbox, dtype=float)
    radius = float(np.linalg.norm(bbox[3:] - bbox[:3]))
    return [float(v) for v in np.asarray(framing.center) + radius * np.asarray(pose_.direction)]


def bbox_from_three_views(lines_by_view: dict[str, list[np.ndarray]]) -> tuple[float, ...] | None:
    """Tight 3D box from the F, R and T drawings (model units), where each image axis is a world axis.

    Sharp edges and silhouettes (visible and hidden) reach the shape's extreme points, so this is the
    exact box up to the curve tolerance, at no cost beyond the views themselves. None if a world axis
    is seen in none of the three drawings (e.g. blank views).
    """
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for name in THREE_VIEWS:
        lines = lines_by_view.get(name)
        if not lines:
            continue
        pts = np.concatenate(lines)
        p = pose(name)
        for column, axis in enumerate((np.asarray(p.x_direction), p.up)):
            k = int(np.argmax(np.abs(axis)))
            values = pts[:, column] * np.sign(axis[k])
            lo[k], hi[k] = min(lo[k], values.min()), max(hi[k], values.max())
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        return None
    return tuple(float(v) for v in (*lo, *hi))
