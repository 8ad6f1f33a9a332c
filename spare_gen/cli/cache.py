"""`spare-gen cache OUT --task T`: decode a task's splits once into the training feed's uint8 cache; `--export FILE`
also writes each split as one portable xz file that trains anywhere, with no PNG and no dataset folder."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from spare_gen.cli.common import DATASET_INPUT
from spare_gen.data.cachefile import SUFFIX, XZ_PRESET
from spare_gen.data.feed import feed_dataset
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


def export_path(pattern: str, task: str, split: str, several: bool) -> Path:
    """The file ``--export`` names for one split; one line (ValueError) when several splits would share it."""
    if several and "{split}" not in pattern:
        raise ValueError(f"--export {pattern}: name {{split}} in it when exporting several splits "
                         f"(e.g. caches/{{task}}-{{split}}{SUFFIX}), or pass one --split")
    try:
        return Path(pattern.format(task=task, split=split))
    except (KeyError, IndexError, ValueError):
        raise ValueError(f"--export {pattern}: only {{task}} and {{split}} may stand in braces") from None


def run(args: argparse.Namespace) -> int:
    splits = args.split or list(SPLITS)
    if args.export:  # a bad pattern stops before any decoding
        for split in splits:
            export_path(args.export, args.task, split, len(splits) > 1)
    for split in splits:
        ds = feed_dataset(Path(args.out), args.task, split, size=args.size, cache_dir=args.cache_dir,
                          questions=args.questions)
        h, w = ds.size
        mb = ds.cache_path.stat().st_size / 1e6
        print(f"{ds.task.value}/{split}: {len(ds)} questions, {int(ds.offsets[-1])} images of {w}x{h} px, "
              f"{mb:.1f} MB in {ds.cache_path}", flush=True)
        if args.export:
            started = time.perf_counter()
            path = ds.export(export_path(args.export, ds.task.value, split, len(splits) > 1), name=args.name,
                             preset=args.xz_preset)
            size = path.stat().st_size
            per = f", {size / len(ds) / 1024:.1f} KiB a question" if len(ds) else ""
            print(f"{ds.task.value}/{split}: exported {size / 2**20:.2f} MiB{per} to {path} "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)
    return 0
