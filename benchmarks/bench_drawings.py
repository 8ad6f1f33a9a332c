"""Drawing stage cost against the bare OpenCASCADE floor, and throughput with 1 and 2 worker processes.

Usage: python benchmarks/bench_drawings.py [COUNT]   (default 12 CSG models, seed 0, as the model stage makes them)

(a) floor: HLRBRep_Algo Update + Hide + HLRBRep_HLRToShape extraction for the 11 poses, on the
    shape as spare_gen prepares it (``spare_gen.cad.hlr.exact_hlr_floor``);
(b) spare_gen's per-view work: HLR + discretisation + canvas mapping + SVG + anti-aliased PNG + the
    views.parquet row, with the atomic file writes; per-model preparation (read, fuse, seams) apart.
Throughput runs the child function ``draw_model`` (everything, per model) in a process pool.
Machines here are shared and noisy: compare numbers within one run only.
"""

from __future__ import annotations

import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from spare_gen import cad
from spare_gen.cad.hlr import HlrModel, exact_hlr_floor
from spare_gen.config.schema import RenderConfig
from spare_gen.drawings.poses import bbox_from_three_views, fixed_poses, framing_for
from spare_gen.drawings.render import Style, render_view
from spare_gen.drawings.stage import draw_model
from spare_gen.models.csg import primitive_counts_for, random_program
from spare_gen.models.stage import check_csg
from spare_gen.rng import derive_rng

REPEATS = 3  # best of, per model, for (a) and (b)


def csg_models(count: int, folder: Path) -> list[Path]:
    """The model stage's first ``count`` CSG models for seed 0 (same programs and rejection rules), as BREP."""
    paths = []
    for index, n in enumerate(primitive_counts_for(count, [2, 3, 4])):
        for attempt in range(25):
            program = random_program(n, derive_rng(0, "csg", index, attempt))
            try:
                shape = cad.build_csg(program)
            except Exception:
                continue
            if check_csg(shape, program, 0.05)[0] is None:
                break
        paths.append(cad.write_brep(shape, folder / f"csg_{index:06d}.brep"))
    return paths


def per_view_work(path: Path, render: dict, out: Path) -> tuple[float, float]:
    """(prep seconds, per-view seconds for the 11 poses): spare_gen's own path, timed as in draw_model."""
    style, poses = Style.from_render(render), fixed_poses()
    t0 = time.perf_counter()
    hlr = HlrModel(cad.read_shape(path), "exact", render["deflection"])
    prep = time.perf_counter() - t0
    t0 = time.perf_counter()
    lines = {p.name: hlr.project(p.direction, p.x_direction) for p in poses}
    framing = framing_for(bbox_from_three_views({k: v.visible + v.hidden for k, v in lines.items()}) or hlr.bbox,
                          style.size, render["margin"])
    for p in poses:
        render_view(path.stem, p, lines[p.name].visible, lines[p.name].hidden, framing, style, out, "exact")
    return prep, time.perf_counter() - t0


def _draw(args: tuple) -> int:
    path, out, render = args
    return len(draw_model(Path(path).stem, path, out, render, 0, "exact")["views"])


def throughput(paths: list[Path], render: dict, out: Path, workers: int) -> float:
    """Views per second drawing every model with ``workers`` processes (pool start-up excluded)."""
    with ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(_draw, [(str(paths[0]), str(out), render)] * workers))  # warm up imports
        t0 = time.perf_counter()
        views = sum(pool.map(_draw, [(str(p), str(out), render) for p in paths]))
        return views / (time.perf_counter() - t0)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    render = RenderConfig().model_dump(mode="json")
    views = [(p.direction, p.x_direction) for p in fixed_poses()]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = csg_models(count, tmp)
        floor = work = prep = 0.0
        for path in paths:
            shape = cad.read_shape(path)
            floor += min(exact_hlr_floor(shape, views) for _ in range(REPEATS))
            # fresh folders: replacing existing files costs ~1.5 ms each on ext4 (auto_da_alloc flush),
            # which a dataset run never pays (its files are new)
            runs = [per_view_work(path, render, tmp / f"b{k}") for k in range(REPEATS)]
            prep += min(r[0] for r in runs)
            work += min(r[1] for r in runs)
        n_views = len(paths) * len(views)
        one = throughput(paths, render, tmp / "w1", 1)
        two = throughput(paths, render, tmp / "w2", 2)
    print(f"drawings: {count} CSG models (seed 0, 2/3/4 primitives), 11 poses, {render['size']} px, best of {REPEATS}")
    print(f"  (a) OCCT floor, exact HLR + extraction : {1e3 * floor / n_views:7.2f} ms/view")
    print(f"  (b) spare_gen per-view work            : {1e3 * work / n_views:7.2f} ms/view  "
          f"(HLR, curves, SVG, AA PNG, row, atomic writes)")
    print(f"  ratio b/a                              : {work / floor:7.2f}   (target <= 1.3)")
    print(f"  per-model preparation (read, fuse, seams): {1e3 * prep / len(paths):7.2f} ms/model")
    print(f"  throughput, draw_model in a process pool: 1 worker {one:6.1f} views/s, "
          f"2 workers {two:6.1f} views/s (speed-up {two / one:.2f}x, target >= 1.8x)")


if __name__ == "__main__":
    main()
