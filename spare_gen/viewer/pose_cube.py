"""The SPARE3D pose cube as inline SVG: isometric poses 1-8 on the cube's corners, F/R/T on its faces.

The geometry is spare_gen.canvas.pose_cube's (the contact sheets draw the same cube); ``highlight`` poses are
filled, the rest outlined.
"""

from __future__ import annotations

import numpy as np

from spare_gen.canvas.pose_cube import pose_cube

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
