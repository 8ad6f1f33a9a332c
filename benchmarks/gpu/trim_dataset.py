"""Copy of a dataset with only what training reads: the question tables of the chosen tasks and the PNGs they name.

    python benchmarks/gpu/trim_dataset.py outputs/spare3d_i2p_small /tmp/gpu/data isometric_to_pose pose_to_isometric

A GPU machine gets a 64 MiB working tree; the full dataset (STEP/BREP models, SVGs, all 11 views of every model) is
several times that. ``train-baseline`` and ``pipelines/reproduce_spare3d_figure6.py`` read only
``questions/<task>/{train,val,test}.parquet`` and the PNGs those rows name (paths relative to the dataset root), and
``dataset.json`` is kept for the record. Needs only pyarrow.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq

SPLITS = ("train", "val", "test")


def png_paths(table) -> set[str]:
    out: set[str] = set()
    for name in table.column_names:
        if name.endswith("_png"):
            for value in table.column(name).to_pylist():
                out.update(value if isinstance(value, list) else [value])
    out.discard(None)
    return out


def main(src: Path, dest: Path, tasks: list[str]) -> int:
    if dest.exists():
        shutil.rmtree(dest)
    wanted: set[str] = set()
    for task in tasks:
        for split in SPLITS:
            rel = Path("questions") / task / f"{split}.parquet"
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, dest / rel)
            wanted |= png_paths(pq.read_table(src / rel))
    for rel in sorted(wanted):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dest / rel)
    shutil.copy2(src / "dataset.json", dest / "dataset.json")
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    print(f"{dest}: {len(wanted)} PNGs, {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]))
