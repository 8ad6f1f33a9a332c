"""Regenerate SPARE3D-CSG at paper scale, then validate and audit it.

    python pipelines/regenerate_spare3d_csg.py --out outputs/spare3d_csg
    python pipelines/regenerate_spare3d_csg.py --out /tmp/tiny --set models.csg.count=12   # a quick try

Runs the main job on ``configs/spare3d_csg.toml`` (12,000 CSG models, the paper's question counts) on the
embedded Dask cluster, or on a running one with ``--scheduler tcp://HOST:PORT``; a rerun resumes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spare_gen.cli.common import script_main
from spare_gen.config import load_config
from spare_gen.jobs.regenerate import run
from spare_gen.validate import main as validate

RECIPE = Path(__file__).resolve().parents[1] / "configs" / "spare3d_csg.toml"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="outputs/spare3d_csg")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--scheduler", default="", help="tcp://HOST:PORT of a running Dask scheduler")
    args = parser.parse_args()
    where = [f"out={json.dumps(args.out)}"] + ([f"runner.scheduler={json.dumps(args.scheduler)}"] if args.scheduler else [])
    config = load_config(RECIPE, [*where, *args.overrides])
    run(config)  # models, drawings, the five tasks (with their bias audit), the pool if the recipe enables it
    return validate(Path(config.out))  # every question rule and file hash


if __name__ == "__main__":
    script_main(main)
