"""The two drawing paths spare_gen's drawings are measured against, each drawing one model's 11 poses.

- **The original SPARE3D path** (ai4ce/SPARE3D, ``Data_generation_script/model2svg.py`` and ``svg2png.py``):
  exact HLR on the shape as read (``HLRBRep_Algo``, the visible and hidden sharp and outline compounds), each edge
  discretised with ``GCPnts_QuasiUniformDeflection`` as pythonocc's ``discretize_edge`` does it, at spare_gen's
  curve tolerance (``render.deflection`` x the bounding-box diagonal: their default, 0.04 model units, assumes
  their models' size and would draw spare_gen's unit-sized ones as coarse polygons), an svgwrite ``Drawing`` of 200 x 200 with one polyline per edge, written; then
  cairosvg converts the SVG to a PNG and removes the SVG, and PIL puts the transparent PNG on white and saves it
  again. Their strokes (0.7 and 0.35) are meant in canvas px (``vector-effect: non-scaling-stroke``, which cairosvg
  ignores), so they are given here in view-box units that make those px: at 0.7 model units, a unit-sized CSG model
  would be drawn as one black blob. Re-implemented here on OCP (their code uses pythonocc-core, which is conda-only), step for step. Needs
  ``pip install svgwrite cairosvg`` (benchmark-only: spare_gen writes its SVG itself and rasterises with PIL).
- **CadQuery** (``cadquery.occ_impl.exporters.svg.getSVG``, then ``cairosvg.svg2png``): runs in an interpreter
  that has cadquery and cairosvg (CadQuery pins its own OCP build, which cannot share an environment with
  spare_gen's ``cadquery-ocp-novtk``), in a process of its own, one request a line; ``getSVG`` takes a projection
  direction only, so each pose is drawn along its direction with CadQuery's own up vector.

Both take CPU seconds of their own process around the drawing of one model (its BREP read included, as spare_gen's
``draw_model`` reads its file), so they go beside ``draw_model`` in one interleaved run
(``bench_drawings.py --spare3d --cadquery PYTHON``).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from OCP.Bnd import Bnd_Box
from OCP.BRep import BRep_Builder
from OCP.BRepAdaptor import BRepAdaptor_Curve
from OCP.BRepBndLib import BRepBndLib
from OCP.BRepTools import BRepTools
from OCP.GCPnts import GCPnts_QuasiUniformDeflection
from OCP.gp import gp_Ax2, gp_Dir, gp_Pnt
from OCP.HLRAlgo import HLRAlgo_Projector
from OCP.HLRBRep import HLRBRep_Algo, HLRBRep_HLRToShape
from OCP.TopAbs import TopAbs_EDGE
from OCP.TopExp import TopExp_Explorer
from OCP.TopoDS import TopoDS_Shape
from PIL import Image

from spare_gen.cad.compat import to_edge

SPARE3D_SIZE = 200  # model2svg.py's default -W / -H
SPARE3D_VIEWBOX = 1.7  # model2svg.py's view box for CSG files: 1.7 x the longest bounding-box edge
CADQUERY_SIZE = 200


def spare3d_available() -> str:
    """"" when the original path can run here, else what is missing."""
    missing = []
    for name in ("svgwrite", "cairosvg"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    return f"pip install {' '.join(missing)}" if missing else ""


def _hlr_edges(shape, direction, x_direction) -> tuple[list, list]:
    algo = HLRBRep_Algo()
    algo.Add(shape)
    algo.Projector(HLRAlgo_Projector(gp_Ax2(gp_Pnt(0, 0, 0), gp_Dir(*direction), gp_Dir(*x_direction))))
    algo.Update()
    algo.Hide()
    shapes = HLRBRep_HLRToShape(algo)

    def edges(*compounds) -> list:
        found = []
        for compound in compounds:
            if compound.IsNull():
                continue
            explorer = TopExp_Explorer(compound, TopAbs_EDGE)
            while explorer.More():
                found.append(to_edge(explorer.Current()))
                explorer.Next()
        return found
    return (edges(shapes.VCompound(), shapes.OutLineVCompound()),
            edges(shapes.HCompound(), shapes.OutLineHCompound()))


def _discretized(edge, tolerance: float) -> list[tuple[float, float]]:
    curve = BRepAdaptor_Curve(edge)
    sampler = GCPnts_QuasiUniformDeflection()
    sampler.Initialize(curve, tolerance, curve.FirstParameter(), curve.LastParameter())
    if not sampler.IsDone():
        raise RuntimeError("discretizer not done")
    points = (curve.Value(sampler.Parameter(i)).Coord() for i in range(1, sampler.NbPoints() + 1))
    return [(x, -y) for x, y, _ in points]


def spare3d_draw_model(path: Path, out: Path, poses, deflection: float) -> float:
    """CPU seconds of the original SPARE3D path drawing ``poses`` of the BREP at ``path`` into ``out``, its curves
    within ``deflection`` x the bounding-box diagonal."""
    import cairosvg  # optional (benchmark only): imported where used, so the other rows run without them
    import svgwrite

    start = time.process_time()
    out.mkdir(parents=True, exist_ok=True)
    shape = TopoDS_Shape()
    BRepTools.Read_s(shape, str(path), BRep_Builder())
    box = Bnd_Box()
    BRepBndLib.Add_s(shape, box)
    (x0, y0, z0), (x1, y1, z1) = box.CornerMin().Coord(), box.CornerMax().Coord()
    longest = max(x1 - x0, y1 - y0, z1 - z0)
    tolerance = deflection * ((x1 - x0) ** 2 + (y1 - y0) ** 2 + (z1 - z0) ** 2) ** 0.5
    for pose in poses:
        visible, hidden = _hlr_edges(shape, pose.direction, pose.x_direction)
        lines = [(_discretized(e, tolerance), True) for e in visible]
        lines += [(_discretized(e, tolerance), False) for e in hidden]
        xs = [p[0] for points, _ in lines for p in points] or [0.0]
        ys = [p[1] for points, _ in lines for p in points] or [0.0]
        width, height = max(xs) - min(xs), max(ys) - min(ys)
        svg_path = out / f"{pose.name}.svg"
        drawing = svgwrite.Drawing(str(svg_path), (SPARE3D_SIZE, SPARE3D_SIZE), debug=True)
        drawing.viewbox(min(xs) - SPARE3D_VIEWBOX * longest / 2 + width / 2,
                        min(ys) - SPARE3D_VIEWBOX * longest / 2 + height / 2,
                        SPARE3D_VIEWBOX * longest, SPARE3D_VIEWBOX * longest)
        drawing.defs.add(drawing.style(".vectorEffectClass {vector-effect: non-scaling-stroke;}"))
        for points, seen in sorted(lines, key=lambda item: item[1]):  # hidden lines first
            polyline = svgwrite.shapes.Polyline(points, fill="none", class_="vectorEffectClass")
            px = (0.7 if seen else 0.35) * SPARE3D_VIEWBOX * longest / SPARE3D_SIZE
            polyline.stroke("black" if seen else "red", width=f"{px:.6g}", linecap="round")
            drawing.add(polyline)
        drawing.save()
        png_path = svg_path.with_suffix(".png")
        with open(svg_path, "rb") as svg_file, open(png_path, "wb") as png_file:
            cairosvg.surface.PNGSurface.convert(bytestring=svg_file.read(), write_to=png_file)
        os.remove(svg_path)
        image = Image.open(png_path).convert("RGBA")
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image, image.split()[-1])
        background.save(png_path)
    return time.process_time() - start


# CadQuery's getSVG and cairosvg, one request a line ("brep_path out_dir"), its CPU seconds a line back
_CADQUERY_SERVER = """
import os, sys, time
import cadquery as cq
import cairosvg
from cadquery.occ_impl.exporters.svg import getSVG
directions = [tuple(map(float, d.split(","))) for d in sys.argv[1:]]
print("ready", flush=True)
for line in sys.stdin:
    path, out = line.split()
    start = time.process_time()
    os.makedirs(out, exist_ok=True)
    shape = cq.importers.importBrep(path).val()
    for i, direction in enumerate(directions):
        svg = getSVG(shape, {"width": SIZE, "height": SIZE, "marginLeft": 10, "marginTop": 10,
                             "projectionDir": direction, "showAxes": False, "showHidden": True})
        with open(os.path.join(out, f"{i}.svg"), "w") as f:
            f.write(svg)
        cairosvg.svg2png(bytestring=svg.encode(), write_to=os.path.join(out, f"{i}.png"))
    print(time.process_time() - start, flush=True)
""".replace("SIZE", str(CADQUERY_SIZE))


class LineServer:
    """A drawing process answering one request a line with its CPU seconds a line (``draw``); its first line of
    output is its greeting (``greeting``)."""

    def __init__(self, argv: list[str], what: str, **popen):
        self.what = what
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, **popen)
        self.greeting = self.proc.stdout.readline().strip()

    def draw(self, *words) -> float:
        self.proc.stdin.write(" ".join(map(str, words)) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.what} stopped (exit {self.proc.wait()})")
        return float(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def cadquery_drawer(python: str, poses) -> LineServer:
    """CadQuery's drawing of a model's poses in a process of ``python`` (an interpreter with cadquery and cairosvg):
    ``draw(brep_path, out_dir)`` returns that process's CPU seconds for one model."""
    directions = [",".join(repr(float(c)) for c in pose.direction) for pose in poses]
    server = LineServer([python, "-c", _CADQUERY_SERVER, *directions], "CadQuery's drawing process")
    if server.greeting != "ready":
        raise RuntimeError(f"--cadquery {python}: it could not import cadquery and cairosvg "
                           f"(exit {server.proc.wait()})")
    return server
