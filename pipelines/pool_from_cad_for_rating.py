"""Build a corrupted-wireframe pool from a folder of CAD files, then serve it to raters.

    python pipelines/pool_from_cad_for_rating.py /data/abc/step --out outputs/abc_pool --models 16 --serve

Reads every STEP/BREP/IGES file under the folder (a bad file becomes a row with its error), extracts each
model's wireframe, corrupts it (deform / perturb / add / remove at low / medium / high), draws the pictures and
the annotation pairs, then (with ``--serve``) opens the rater web app on http://127.0.0.1:8765.
Rank the answers afterwards with ``spare-gen rank OUT OUT/annotations``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spare_gen.annotate.plan import Settings
from spare_gen.annotate.server import serve
from spare_gen.cli.common import script_main
from spare_gen.config import load_config
from spare_gen.jobs.regenerate import POOL_STAGES, run

RECIPE = Path(__file__).resolve().parents[1] / "configs" / "abc.toml"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cad_folder", help="a folder of .step/.stp/.brep/.iges/.igs files (searched recursively)")
    parser.add_argument("--out", default="outputs/cad_pool")
    parser.add_argument("--models", type=int, default=16, help="models in the pool")
    parser.add_argument("--serve", action="store_true", help="serve the rater web app when the pool is ready")
    args = parser.parse_args()
    config = load_config(RECIPE, [f"out={json.dumps(args.out)}", f"models.files.root={json.dumps(args.cad_folder)}",
                                      f"pool.models={args.models}"])
    run(config, stages=POOL_STAGES)  # models, then wireframes, variants, pictures and pairs
    if not args.serve:
        print(f"pool ready; serve it with: spare-gen annotate {config.out}")
        return 0
    return serve(Path(config.out), host="127.0.0.1", port=8765, rater=None, settings=Settings())


if __name__ == "__main__":
    script_main(main)
