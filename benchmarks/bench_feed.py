"""Images per second per core of the training feed: from the decoded cache, from PNGs, beside bare PNG decoding.

    python benchmarks/bench_feed.py OUT [--task T ...] [--split train] [--size N] [--batch 32] [--min-s 2]

For each task: CPU seconds (``time.process_time``: every thread of this process, so an intra-op pool that spins
counts) per image of bare decoding (Pillow decode + resize + numpy, nothing else), of the feed decoding PNGs
(``cache=False``), of the feed reading its cache (built first, into a temporary folder; its build is timed too), and
of ``spare_gen.data.torch.task_dataset`` (float32 tensors), collated into batches of ``--batch`` as a DataLoader
does (the feed by ``spare_gen.data.feed.collate``, task_dataset by ``default_collate``). An image is one decoded
drawing (3 views, the extra drawing or the K candidates of a question).
Prints the load average at start and end: on a shared machine compare the ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import default_collate

from spare_gen.data.feed import collate, feed_dataset
from spare_gen.data.torch import task_dataset
from spare_gen.stages.questions.tasks import TASK_SPECS

DEFAULT_TASKS = tuple(spec.name.value for spec in TASK_SPECS.values() if spec.n_answers)  # the multiple-choice tasks


def images_per_cpu_s(run_epoch, n_images: int, min_s: float) -> float:
    """Repeat ``run_epoch`` until ``min_s`` CPU seconds have passed; images per CPU second."""
    run_epoch()  # warm: page cache, lazy imports, the memory map
    epochs, start = 0, time.process_time()
    while time.process_time() - start < min_s:
        run_epoch()
        epochs += 1
    return epochs * n_images / (time.process_time() - start)


def batched(dataset, batch: int, collate_fn=default_collate) -> None:
    for at in range(0, len(dataset), batch):
        collate_fn([dataset[i] for i in range(at, min(at + batch, len(dataset)))])


def bench_task(out: Path, task: str, split: str, size: int | None, batch: int, min_s: float) -> None:
    feed = feed_dataset(out, task, split, size=size, cache=False)
    n_images = int(feed.offsets[-1])
    paths = [rel for rels in feed.paths for rel in rels]

    def decode_all() -> None:
        for rel in paths:
            np.asarray(feed.decode(rel))  # read, decode, resize, an (H, W, 3) array: nothing else

    bare = images_per_cpu_s(decode_all, n_images, min_s)
    png = images_per_cpu_s(lambda: batched(feed, batch, collate), n_images, min_s)
    legacy = images_per_cpu_s(lambda: batched(task_dataset(out, task, split, size=size), batch), n_images, min_s)
    with tempfile.TemporaryDirectory(prefix="bench-feed-") as cache_dir:
        start = time.process_time()
        cached = feed_dataset(out, task, split, size=size, cache_dir=cache_dir)
        build = n_images / (time.process_time() - start)
        from_cache = images_per_cpu_s(lambda: batched(cached, batch, collate), n_images, min_s)
    h, w = feed.size
    print(f"{task}/{split}: {len(feed)} questions, {n_images} images of {w}x{h} px, batches of {batch}")
    print(f"  images per CPU second: bare decoding {bare:,.0f} | feed from PNGs {png:,.0f} ({png / bare:.2f}x bare) "
          f"| feed from the cache {from_cache:,.0f} ({from_cache / bare:.1f}x bare; building it {build:,.0f}) "
          f"| task_dataset (float32) {legacy:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--task", action="append", help=f"repeatable (default: {', '.join(DEFAULT_TASKS)})")
    parser.add_argument("--split", default="train")
    parser.add_argument("--size", type=int, default=None, help="square side in px (default: the drawings' own)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--min-s", type=float, default=2.0, help="CPU seconds per measurement")
    args = parser.parse_args()
    print(f"load average at start {os.getloadavg()[0]:.2f}; torch intra-op threads {torch.get_num_threads()}")
    for task in args.task or DEFAULT_TASKS:
        bench_task(args.out, task, args.split, args.size, args.batch, args.min_s)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
