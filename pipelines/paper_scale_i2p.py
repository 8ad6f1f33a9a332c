"""Paper-scale Isometric to Pose on a laptop: 5,000 questions on both pose sets, the same models and drawings.

    nice -n 10 python pipelines/paper_scale_i2p.py --out outputs/i2p_paper_scale          # about 40 min on 2 idle cores
    python pipelines/paper_scale_i2p.py --out /tmp/i2p --set models.csg.count=60 --set questions.counts.isometric_to_pose=30

Step 1 runs ``configs/spare3d_paper_scale_upper_poses.toml`` (9,200 CSG models under the original generator's rules,
5,000 isometric_to_pose questions split 8:1:1, choices poses 1-4: no up/down cue) into ``OUT/upper_poses``. Step 2
links that folder's files into ``OUT/paper_poses`` (hard links: no second copy of the drawings; spare_gen replaces a
file, never writes into one) and reruns it with ``questions.pose_choices = "spare3d"`` (the paper's poses 1, 2, 5,
6): the models and drawings resume as they are, only the questions are made again. Both run the models, drawings and
questions stages, and the bias audit that follows the questions (the card and pool are left out: ``--stages`` to
change). A rerun resumes either step; a finished one is "nothing to do". Then, for example:

    spare-gen learning-curve OUT/upper_poses --task isometric_to_pose --arch hypotheses
    spare-gen learning-curve OUT/paper_poses --task isometric_to_pose --arch hypotheses
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

from spare_gen.cli.common import script_main

RECIPE = Path(__file__).resolve().parents[1] / "configs" / "spare3d_paper_scale_upper_poses.toml"
NAME = Path(__file__).name
STAGES = ("models", "drawings", "questions")
PAPER_POSES = 'questions.pose_choices="spare3d"'


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links not allowed: a copy
        shutil.copy2(src, dst)


def linked_tree(src: Path, dst: Path) -> None:
    """``dst`` with every file of ``src`` hard-linked (copied where a link cannot be made); files ``dst`` already has
    are kept."""
    shutil.copytree(src, dst, copy_function=_link, dirs_exist_ok=True, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if (dst / Path(folder).relative_to(src) / n).is_file()])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="outputs/i2p_paper_scale")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="config override for both steps")
    parser.add_argument("--stages", default=",".join(STAGES), help="stages of both steps")
    parser.add_argument("--workers", type=int, default=None, help="Dask workers (default: the config's)")
    args = parser.parse_args()
    from spare_gen.config import load_config  # generation needs OCP and Dask
    from spare_gen.jobs.regenerate import run

    out = Path(args.out)
    upper, paper = out / "upper_poses", out / "paper_poses"
    workers = [f"runner.workers={args.workers}"] if args.workers else []
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    configs = [load_config(RECIPE, [f"out={json.dumps(str(upper))}", *workers, *args.overrides]),
               load_config(RECIPE, [f"out={json.dumps(str(paper))}", *workers, *args.overrides, PAPER_POSES])]
    print(f"{NAME}: step 1 of 2: poses 1-4 into {upper}", flush=True)
    run(configs[0], stages=stages)
    print(f"{NAME}: step 2 of 2: the paper's poses 1, 2, 5, 6 into {paper}, from step 1's models and drawings",
          flush=True)
    linked_tree(upper, paper)
    run(configs[1], stages=stages)
    print(f"{NAME}: isometric_to_pose on both pose sets in {upper} and {paper}")
    return 0


if __name__ == "__main__":
    script_main(main)
