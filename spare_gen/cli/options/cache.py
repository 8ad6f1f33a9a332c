"""`spare-gen cache OUT --task T`: decode a task's splits once into the training feed's uint8 cache;
--export FILE writes each split as one portable xz file.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.cache``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.data.cacheformat import SUFFIX, XZ_PRESET
from spare_gen.stages.questions.layout import SPLITS

EPILOG = DATASET_INPUT + f"""

writes one uint8 array per split, (images, 3, H, W), that spare_gen.data.feed memory-maps instead of decoding PNGs,
under --cache-dir (default $SPARE_GEN_CACHE, else $XDG_CACHE_HOME/spare_gen, else ~/.cache/spare_gen), named by
the dataset folder, task, split, size and the split table's SHA-256. An up-to-date cache is kept as it is; a
changed table gets a new one and the stale one is deleted. The feed builds a missing cache itself on first use;
this command does it ahead of training (e.g. before DataLoader workers start).

--export FILE also writes each split as one self-describing xz file (images, labels, question ids, task, split,
table hash, size, channel and view order, the dataset's config): `{{split}}` and `{{task}}` in FILE stand for the
split and task (needed when several splits are exported). A folder of such files trains like the dataset itself
(spare-gen train-baseline FOLDER, pipelines/reproduce_spare3d_figure6.py --dataset FOLDER), from any path. Examples:

  spare-gen cache outputs/default --task isometric_to_pose --split train --size 200
  spare-gen cache outputs/spare3d_csg_original --task isometric_to_pose --export caches/{{task}}-{{split}}{SUFFIX}"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run`")
    p.add_argument("--task", required=True, help="the task whose splits to decode, e.g. isometric_to_pose")
    p.add_argument("--split", action="append", choices=SPLITS,
                   help="train, val or test; repeat for several (default: all three)")
    p.add_argument("--size", type=int, default=None, help="square image side in pixels (default: the drawings' own)")
    p.add_argument("--cache-dir", default=None, help="cache folder (default: see below)")
    p.add_argument("--export", default=None, metavar="FILE",
                   help=f"also write each split as one portable file (xz), e.g. caches/{{task}}-{{split}}{SUFFIX}")
    p.add_argument("--name", default=None, help="the dataset's name in an exported file (default: OUT's folder name)")
    p.add_argument("--xz-preset", type=int, default=XZ_PRESET, choices=range(10), metavar="0..9",
                   help=f"xz compression level of --export (default: {XZ_PRESET})")
    p.add_argument("--questions", type=int, default=None, metavar="N",
                   help="only each split's first N questions (default: all)")
