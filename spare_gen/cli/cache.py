"""`spare-gen cache OUT --task T`: decode a task's splits once into the training feed's uint8 cache."""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_gen.data.feed import feed_dataset
from spare_gen.stages.questions.layout import SPLITS


def run(args: argparse.Namespace) -> int:
    for split in args.split or SPLITS:
        ds = feed_dataset(Path(args.out), args.task, split, size=args.size, cache_dir=args.cache_dir)
        h, w = ds.size
        mb = ds.cache_path.stat().st_size / 1e6
        print(f"{ds.task.value}/{split}: {len(ds)} questions, {int(ds.offsets[-1])} images of {w}x{h} px, "
              f"{mb:.1f} MB in {ds.cache_path}")
    return 0
