"""The SPARE3D pose cube's drawing: isometric poses 1-8 on the cube's corners, F/R/T on its faces, projected.

Seen from a slightly turned oblique view so that no two corners coincide (in the isometric pose 2 view, corners 2
and 8 would); the edges at the hidden corner are marked hidden. Plain numbers in a unit frame (x right, y up), which
the ``show`` page and the quiz (SVG, :func:`pose_cube_svg`) and the contact sheets (PNG, spare_gen.stages.questions)
draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from spare_gen.canvas.poses import ISOMETRIC_VIEWS, POSE_TABLE, Pose

VIEW = Pose("cube", tuple(np.array([0.62, -1.0, 0.45]) / np.linalg.norm([0.62, -1.0, 0.45])),
            tuple(np.array([1.0, 0.62, 0.0]) / np.linalg.norm([1.0, 0.62, 0.0])))
FACES = {"F": (0, -1, 0), "R": (1, 0, 0), "T": (0, 0, 1)}
LABEL_GRID = np.linspace(-0.6, 0.6, 13)  # where on a face its label may go (face coordinates, the centre is 0, 0)


@dataclass(frozen=True)
class CubeDrawing:
    """``corners``: pose name -> (x, y); ``edges``: (pose a, pose b, hidden); ``faces``: F/R/T -> (x, y)."""

    corners: dict[str, tuple[float, float]]
    edges: tuple[tuple[str, str, bool], ...]
    faces: dict[str, tuple[float, float]]


@lru_cache(maxsize=1)
def pose_cube() -> CubeDrawing:
    """The cube in the oblique view, corners in ``ISOMETRIC_VIEWS`` order."""
    corners = {k: np.sign(np.asarray(POSE_TABLE[k][0], dtype=float)) for k in ISOMETRIC_VIEWS}
    xy = {k: tuple(float(v) for v in VIEW.project(c[None])[0]) for k, c in corners.items()}
    far = min(corners, key=lambda k: float(corners[k] @ np.asarray(VIEW.direction)))  # the hidden corner
    keys = list(corners)
    edges = tuple((a, b, far in (a, b)) for i, a in enumerate(keys) for b in keys[i + 1:]
                  if np.abs(corners[a] - corners[b]).sum() == 2)  # cube edges join corners differing in one axis
    segments = [(np.asarray(xy[a]), np.asarray(xy[b])) for a, b, _ in edges]
    faces = {name: _label_spot(np.asarray(n, dtype=float), segments, [np.asarray(p) for p in xy.values()])
             for name, n in FACES.items()}
    return CubeDrawing(xy, edges, faces)


def _distance_to_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    t = float(np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0))
    return float(np.linalg.norm(p - (a + t * (b - a))))


def _label_spot(normal: np.ndarray, segments: list, corners: list) -> tuple[float, float]:
    """The point of the face (inset grid) farthest, in the drawing, from every edge and corner: at the face's centre
    the F label would sit on the hidden corner seen through the face, or on a hidden edge."""
    u, v = (np.roll(normal, 1), np.roll(normal, 2))  # two axes in the face's plane
    best, spot = -1.0, (0.0, 0.0)
    for a in LABEL_GRID:
        for b in LABEL_GRID:
            p = VIEW.project((normal + a * u + b * v)[None])[0]
            clear = min([_distance_to_segment(p, s, e) for s, e in segments] +
                        [float(np.linalg.norm(p - c)) - 0.25 for c in corners])
            if clear > best + 1e-9:
                best, spot = clear, (float(p[0]), float(p[1]))
    return spot


SIZE = 180
HIGHLIGHT = "#1f77b4"


def pose_cube_svg(highlight: tuple[int, ...] = (), title: str = "") -> str:
    """An SVG element (string) of the pose cube with the given poses filled."""
    cube = pose_cube()
    scale, centre = SIZE * 0.27, np.array([SIZE / 2, SIZE / 2 + 4])

    def px(p: tuple[float, float]) -> tuple[float, float]:
        return float(centre[0] + scale * p[0]), float(centre[1] - scale * p[1])

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE}" viewBox="0 0 {SIZE} {SIZE}" '
             f'role="img" aria-label="pose cube{": " + title if title else ""}">',
             f'<rect width="{SIZE}" height="{SIZE}" fill="white"/>']
    for a, b, hidden in cube.edges:
        (x1, y1), (x2, y2) = px(cube.corners[a]), px(cube.corners[b])
        dash = ' stroke-dasharray="4 3"' if hidden else ""
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#444" '
                     f'stroke-width="1.2"{dash}/>')
    for name, at in cube.faces.items():
        x, y = px(at)
        parts.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" font-size="13" font-family="sans-serif" fill="#888" '
                     f'text-anchor="middle">{name}</text>')
    for k, at in cube.corners.items():
        x, y = px(at)
        on = int(k) in highlight
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="9" fill="{HIGHLIGHT if on else "white"}" '
                     f'stroke="{HIGHLIGHT}" stroke-width="1.5"/>')
        parts.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" font-size="11" font-family="sans-serif" '
                     f'fill="{"white" if on else HIGHLIGHT}" text-anchor="middle">{k}</text>')
    if title:
        parts.append(f'<text x="4" y="14" font-size="11" font-family="sans-serif" fill="#333">{title}</text>')
    parts.append("</svg>")
    return "".join(parts)
