"""`spare-gen cache OUT --task T`: decode a task's splits once into the training feed's uint8 cache; `--export FILE`
also writes each split as one portable xz file that trains anywhere, with no PNG and no dataset folder."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from spare_gen.data.cachefile import SUFFIX
from spare_gen.data.feed import feed_dataset
from spare_gen.stages.questions.layout import SPLITS


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
        how = "already cached, nothing decoded" if ds.cache_reused else "decoded"
        print(f"{ds.task.value}/{split}: {len(ds)} questions, {int(ds.offsets[-1])} images of {w}x{h} px, "
              f"{mb:.1f} MB in {ds.cache_path} ({how})", flush=True)
        if args.export:
            started = time.perf_counter()
            path = ds.export(export_path(args.export, ds.task.value, split, len(splits) > 1), name=args.name,
                             preset=args.xz_preset)
            size = path.stat().st_size
            per = f", {size / len(ds) / 1024:.1f} KiB a question" if len(ds) else ""
            print(f"{ds.task.value}/{split}: exported {size / 2**20:.2f} MiB{per} to {path} "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)
    return 0
