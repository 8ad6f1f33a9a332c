"""What skipping the views no asked task reads saves the drawings stage: the paper-scale I2P recipe's drawings with
all 11 views against the 9 isometric_to_pose reads (F, R, T, poses 1-6), in one interleaved run.

Usage: python benchmarks/bench_drawn_views.py [COUNT]   (default 80 CSG models, seed 0, as the model stage makes them)

Each model is drawn by the drawing child's function ``draw_model`` (read, fuse, HLR of every view, every check, SVG +
PNG + rows: the OCCT child's whole work) with the render section of ``configs/spare3d_paper_scale_upper_poses.toml``,
once with every view and once with ``tasks.drawn_views`` of that recipe, alternating which goes first, CPU time of
this process (``time.process_time``, which another job on the machine disturbs much less than wall time). Every file
the skipping run writes is compared with the full run's (sha256), and the models whose views 7 or 8 failed or left
exact HLR in the full run are counted (a model's status and method are summarised over the views drawn). The load
average is printed before and after: compare numbers within one run only.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_drawings import csg_models  # noqa: E402

from spare_gen.canvas.views import FIXED_VIEWS  # noqa: E402
from spare_gen.config import load_config  # noqa: E402
from spare_gen.stages.drawings.child import draw_model  # noqa: E402
from spare_gen.stages.questions.tasks import drawn_views  # noqa: E402

RECIPE = REPO / "configs" / "spare3d_paper_scale_upper_poses.toml"


def _files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _cpu(path: Path, out: Path, render, views) -> tuple[float, dict]:
    start = time.process_time()
    result = draw_model(path.stem, str(path), str(out), render, None, "exact", views)
    return time.process_time() - start, result


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    config = load_config(RECIPE)
    render, subset = config.render, drawn_views(config)
    skipped = [v for v in FIXED_VIEWS if v not in subset]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {count} CSG models, render of "
          f"{RECIPE.name}; views drawn {len(subset)} of 11 (skipped {', '.join(skipped)})", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = csg_models(count, root / "models")
        cpu = {"all": 0.0, "subset": 0.0}
        odd: list[str] = []
        for i, path in enumerate(paths):
            order = [("all", None), ("subset", subset)] if i % 2 == 0 else [("subset", subset), ("all", None)]
            results = {}
            for name, views in order:
                seconds, results[name] = _cpu(path, root / name, render, views)
                cpu[name] += seconds
            for row in results["all"]["views"]:
                if row["view"] in skipped and (row["status"] != "ok" or row["hlr_method"] != "exact"):
                    odd.append(f"{path.stem} view {row['view']}: {row['status']} {row['hlr_method']}")
        full, part = _files(root / "all"), _files(root / "subset")
        differ = [f for f in part if full.get(f) != part[f]]
        per_all, per_subset = (1000 * cpu[k] / count for k in ("all", "subset"))
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"draw_model CPU per model: all 11 views {per_all:.1f} ms, {len(subset)} views {per_subset:.1f} ms; "
              f"ratio {per_subset / per_all:.3f} (saving {100 * (1 - per_subset / per_all):.1f} %)")
        print(f"files: {len(part)} written with the skip, {len(full)} without; {len(differ)} differ"
              + (f", e.g. {differ[0]}" if differ else ""))
        print(f"models whose skipped views failed or left exact HLR in the full run: {len(odd)}"
              + (f" ({'; '.join(odd[:5])})" if odd else ""))
        return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
