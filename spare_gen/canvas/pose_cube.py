"""The SPARE3D pose cube as inline SVG: isometric poses 1-8 on the cube's corners, F/R/T on its faces.

Drawn from a slightly turned oblique view so that no two corners coincide (in the isometric pose 2
view, corners 2 and 8 would); ``highlight`` poses are filled, the rest outlined.
"""

from __future__ import annotations

import numpy as np

from spare_gen.canvas.poses import ISOMETRIC_VIEWS, POSE_TABLE, Pose

VIEW = Pose("cube", tuple(np.array([0.62, -1.0, 0.45]) / np.linalg.norm([0.62, -1.0, 0.45])),
            tuple(np.array([1.0, 0.62, 0.0]) / np.linalg.norm([1.0, 0.62, 0.0])))
FACES = {"F": (0, -1, 0), "R": (1, 0, 0), "T": (0, 0, 1)}
SIZE = 180
HIGHLIGHT = "#1f77b4"


def _corners() -> dict[str, np.ndarray]:
    return {k: np.sign(np.asarray(POSE_TABLE[k][0], dtype=float)) for k in ISOMETRIC_VIEWS}


def _clear_of(at: np.ndarray, dots: list[np.ndarray], gap: float = 20.0) -> tuple[float, float]:
    """A face label's place, moved away from a corner's circle it would touch (the F face's centre falls next to
    the hidden corner 8 in this view)."""
    near = min(dots, key=lambda d: float(np.linalg.norm(at - d)))
    away = at - near
    if float(np.linalg.norm(away)) >= gap:
        return float(at[0]), float(at[1])
    away = away / np.linalg.norm(away) if float(np.linalg.norm(away)) > 1e-6 else np.array([-1.0, 0.0])
    moved = near + gap * away
    return float(moved[0]), float(moved[1])


def pose_cube_svg(highlight: tuple[int, ...] = (), title: str = "") -> str:
    """An SVG element (string) of the pose cube with the given poses filled."""
    corners = _corners()
    xy = {k: VIEW.project(v[None])[0] for k, v in corners.items()}
    scale, centre = SIZE * 0.27, np.array([SIZE / 2, SIZE / 2 + 4])

    def px(p: np.ndarray) -> tuple[float, float]:
        return float(centre[0] + scale * p[0]), float(centre[1] - scale * p[1])

    far = min(corners, key=lambda k: float(corners[k] @ np.asarray(VIEW.direction)))  # the hidden corner
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE}" viewBox="0 0 {SIZE} {SIZE}" '
             f'role="img" aria-label="pose cube{": " + title if title else ""}">',
             f'<rect width="{SIZE}" height="{SIZE}" fill="white"/>']
    keys = list(corners)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if np.abs(corners[a] - corners[b]).sum() != 2:  # cube edges join corners differing in one axis
                continue
            (x1, y1), (x2, y2) = px(xy[a]), px(xy[b])
            dash = ' stroke-dasharray="4 3"' if far in (a, b) else ""
            parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#444" '
                         f'stroke-width="1.2"{dash}/>')
    dots = [np.array(px(xy[k])) for k in corners]
    for name, normal in FACES.items():
        x, y = _clear_of(np.array(px(VIEW.project(np.asarray(normal, dtype=float)[None] * 1.0)[0])), dots)
        parts.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" font-size="13" font-family="sans-serif" fill="#888" '
                     f'text-anchor="middle">{name}</text>')
    for k in keys:
        x, y = px(xy[k])
        on = int(k) in highlight
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="9" fill="{HIGHLIGHT if on else "white"}" '
                     f'stroke="{HIGHLIGHT}" stroke-width="1.5"/>')
        parts.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" font-size="11" font-family="sans-serif" '
                     f'fill="{"white" if on else HIGHLIGHT}" text-anchor="middle">{k}</text>')
    if title:
        parts.append(f'<text x="4" y="14" font-size="11" font-family="sans-serif" fill="#333">{title}</text>')
    parts.append("</svg>")
    return "".join(parts)
