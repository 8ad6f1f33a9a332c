"""CPU cost of the stray-line check against exact HLR, per model, and the largest distance it measures per view.

Usage: python benchmarks/bench_stray_check.py FILE [FILE ...]   (STEP, IGES or BREP: e.g. tests/data/cad/* or a
run's models/*.brep). Prints, per file: reference samples, mesh folds, CPU seconds of the outline (once per model),
of the check over the 11 poses and of exact HLR over them, and the largest drawn-to-reference distance (px) per
view (the check fails a view above drawings.stray.STRAY_PX).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from spare_gen import cad
from spare_gen.cad.hlr import HlrModel
from spare_gen.config.schema import RenderConfig
from spare_gen.stages.drawings.child import estimated_scale, model_poses
from spare_gen.stages.drawings.preset import drawing_rule
from spare_gen.stages.drawings.stray import Outline


def main(paths: list[str]) -> None:
    render = RenderConfig()
    rule = drawing_rule(render)
    for path in paths:
        hlr = HlrModel(cad.read_shape(path), "exact", render.deflection, smooth_edges=rule.smooth_edges)
        scale = estimated_scale(hlr, render.size, render.margin, rule)
        start = time.process_time()
        outline = Outline.of(hlr, scale)
        outline_s, check_s, hlr_s, worst = time.process_time() - start, 0.0, 0.0, []
        for pose in model_poses(0, None):
            start = time.process_time()
            lines = hlr.project(pose.direction, pose.x_direction)
            middle = time.process_time()
            worst.append(round(outline.stray_px(lines, pose), 2))
            hlr_s, check_s = hlr_s + middle - start, check_s + time.process_time() - middle
        print(f"{Path(path).name}: {len(outline.edges)} samples, {len(hlr.outline[1].ends)} folds; CPU s: outline "
              f"{outline_s:.3f}, check {check_s:.3f}, exact HLR {hlr_s:.3f}; largest distance per view (px) {worst}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
