"""Figure 6 at the paper's scale on a lent GPU: the cells in priority order under a time budget, results after each.

Run by ``benchmarks/gpu/paper_scale.sh`` on the device machine (or here with ``--device cpu``, same layout):

    python benchmarks/gpu/paper_scale.py --carry outputs/gpu --budget 540 --results "$OUT"

Reads the exported caches that ``benchmarks/gpu/prepare_paper_scale.py`` put under ``CARRY/call*/caches/<role>/``
(role ``paper``: the paper's poses 1, 2, 5, 6, both tasks; ``default_poses``: spare_gen's poses 1-4, Isometric to
Pose), whichever calls have carried so far (a warm machine keeps the earlier calls' folders). Trains, in this order,
each cell whose three splits are here and that is not done yet (``--state`` keeps the done ones between calls):

1. I2P VGG-16 on the paper's poses, with the views and with them blank;
2. I2P VGG-16 on the default poses, with and without the views;
3. I2P ResNet-50 on the paper's poses, with the views;
4. 3V2I binary VGG-16 (paper);
5. the rest of Figure 6 the data allows, while time remains.

Each cell runs 50 epochs; the VGG-16 I2P cells run 100 when the time left covers that and the 50 epochs of every
cell of tiers 1-4 still to run in this call. A cell whose 50 epochs the estimate (a prior speed per network, then the
speed measured here) says do not fit is skipped; no epoch starts that would end past the budget (``stopped``).
Writes under ``--results`` after each cell: ``<config>.json`` per dataset (``dataset``: the config name and poses;
``cells``: figure6.json's rows with every epoch's train, val and test accuracy), ``table.md``, ``figure6.png`` when
the chart can be drawn, and ``log.txt`` (the shell script's).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a file from any folder

from spare_gen.atomic import write_bytes, write_json, write_text  # noqa: E402
from spare_gen.baseline.figure6 import Cell, cell_of, cell_record, markdown  # noqa: E402
from spare_gen.baseline.options import Arch, Formulation, TrainOptions  # noqa: E402
from spare_gen.config.schema import TaskName  # noqa: E402
from spare_gen.data.cachefile import cache_files, read_header  # noqa: E402

I2P, T3 = TaskName.ISOMETRIC_TO_POSE, TaskName.THREE_VIEW_TO_ISOMETRIC
EPOCHS, LONG_EPOCHS = 50, 100
# training questions per second on an H200, bf16, 200 px (benchmarks/README.md), per image stack: a first guess
PRIOR_STACKS_PER_S = {Arch.VGG16: 3000.0, Arch.RESNET50: 1300.0, Arch.BAGNET33: 900.0}
STACKS = {Formulation.MULTICLASS: 1, Formulation.BINARY: 4, Formulation.METRIC: 2}
OVERHEAD_S = 15.0  # model build, first-epoch autotuning, writing a cell's results


@dataclass(frozen=True)
class Planned:
    tier: int
    role: str
    task: TaskName
    formulation: Formulation
    arch: Arch
    blank: bool = False

    @property
    def long(self) -> bool:
        return self.task is I2P and self.arch is Arch.VGG16

    @property
    def key(self) -> str:
        blank = "-blank" if self.blank else ""
        return f"{self.role}/{self.task.value}-{self.formulation.value}-{self.arch.value}{blank}"


MC, BIN, MET = Formulation.MULTICLASS, Formulation.BINARY, Formulation.METRIC
PLAN = (
    Planned(1, "paper", I2P, MC, Arch.VGG16), Planned(1, "paper", I2P, MC, Arch.VGG16, True),
    Planned(2, "default_poses", I2P, MC, Arch.VGG16), Planned(2, "default_poses", I2P, MC, Arch.VGG16, True),
    Planned(3, "paper", I2P, MC, Arch.RESNET50),
    Planned(4, "paper", T3, BIN, Arch.VGG16),
    Planned(5, "paper", I2P, MC, Arch.BAGNET33), Planned(5, "paper", T3, BIN, Arch.RESNET50),
    Planned(5, "paper", I2P, MC, Arch.RESNET50, True), Planned(5, "paper", T3, BIN, Arch.BAGNET33),
    Planned(5, "paper", T3, MET, Arch.VGG16), Planned(5, "paper", T3, MET, Arch.RESNET50),
    Planned(5, "paper", T3, MET, Arch.BAGNET33), Planned(5, "paper", I2P, MC, Arch.BAGNET33, True),
    Planned(5, "default_poses", I2P, MC, Arch.RESNET50),
)


def say(text: str) -> None:
    print(f"paper_scale: {text}", flush=True)


def find_caches(carry: Path) -> dict[tuple[str, str], dict[str, Path]]:
    """(role, task) -> split -> file, over every call folder carried so far."""
    found: dict[tuple[str, str], dict[str, Path]] = {}
    for folder in sorted(carry.glob("call*/caches/*")):
        for path in cache_files(folder):
            header = read_header(path)
            found.setdefault((folder.name, header["task"]), {})[header["split"]] = path
    return found


class Speeds:
    """Image stacks per second per network: the prior, then what this machine measured."""

    def __init__(self):
        self.measured: dict[Arch, float] = {}

    def seconds(self, cell: Planned, n: dict[str, int], epochs: int) -> float:
        rate = self.measured.get(cell.arch, PRIOR_STACKS_PER_S.get(cell.arch, 3000.0))
        stacks = STACKS[cell.formulation]
        per_epoch = stacks * (n["train"] + (n["val"] + n["test"]) / 3) / rate  # evaluation: forward only
        return OVERHEAD_S + epochs * per_epoch

    def learn(self, cell: Planned, history: dict) -> None:
        if history["train_seconds"] > 0:
            done = len(history["epoch_loss"]) * history["n"]["train"] * STACKS[cell.formulation]
            self.measured[cell.arch] = done / history["train_seconds"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--carry", default="outputs/gpu", help="the folder holding call1/, call2/, ...")
    parser.add_argument("--budget", type=float, default=540, help="seconds for this call, from start to the end")
    parser.add_argument("--results", default="outputs/gpu/results", help="where the results go ($OUT on the device)")
    parser.add_argument("--state", default="/tmp/paper_scale", help="finished cells, kept between calls")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast (GPUs)")
    for name in ("epochs", "long-epochs", "size", "questions", "batch-size"):
        parser.add_argument(f"--{name}", type=int, default=None, help="override (a CPU check of the layout)")
    parser.add_argument("--tiers", type=int, default=5, help="train tiers 1..TIERS only")
    parser.add_argument("--arch", choices=[a.value for a in Arch], default=None,
                        help="one network for every cell (a quick CPU check of the layout: small)")
    args = parser.parse_args()
    deadline = time.monotonic() + args.budget

    from spare_gen.baseline.train import load_splits, pick_device, train  # torch only from here

    carry, results, state = Path(args.carry), Path(args.results), Path(args.state)
    results.mkdir(parents=True, exist_ok=True)
    done_path = state / "cells.json"
    done: dict[str, dict] = json.loads(done_path.read_text()) if done_path.is_file() else {}
    found = find_caches(carry)
    device = pick_device(args.device)
    say(f"device {device}; caches: {', '.join(f'{r}/{t}' for (r, t), s in sorted(found.items())) or 'none'}; "
        f"{len(done)} cells done before")
    epochs, long_epochs = args.epochs or EPOCHS, args.long_epochs or args.epochs or LONG_EPOCHS
    overrides = {k: v for k, v in (("size", args.size), ("questions", args.questions),
                                   ("batch_size", args.batch_size)) if v is not None}
    speeds, loaded = Speeds(), {}

    def present(cell: Planned) -> bool:
        return cell.tier <= args.tiers and set(found.get((cell.role, cell.task.value), {})) == {"train", "val", "test"}

    def sizes(cell: Planned) -> dict[str, int]:
        files = found[(cell.role, cell.task.value)]
        limit = args.questions or 10**9
        return {s: min(read_header(p)["n_questions"], limit) for s, p in files.items()}

    for i, cell in enumerate(PLAN):
        if cell.key in done or not present(cell):
            continue
        left = deadline - time.monotonic()
        later = sum(speeds.seconds(c, sizes(c), epochs) for c in PLAN[i + 1:]
                    if c.tier <= 4 and c.key not in done and present(c))
        n = sizes(cell)
        if speeds.seconds(cell, n, epochs) > left:
            say(f"{cell.key}: skipped, {left:.0f} s left, about {speeds.seconds(cell, n, epochs):.0f} s needed")
            continue
        run_epochs = long_epochs if cell.long and speeds.seconds(cell, n, long_epochs) + later <= left else epochs
        folder = found[(cell.role, cell.task.value)]["train"].parent
        size = {"size": read_header(found[(cell.role, cell.task.value)]["train"])["size"][0]}  # the caches' own
        options = TrainOptions(arch=Arch(args.arch) if args.arch else cell.arch, formulation=cell.formulation,
                               epochs=run_epochs, blank_views=cell.blank,
                               device=args.device, bf16=args.bf16, **{**size, **overrides}).resolved(cell.task)
        key = (cell.role, cell.task, options.size)
        if key not in loaded:
            loaded.clear()  # one dataset's splits on the device at a time
            started = time.perf_counter()
            loaded[key] = load_splits(folder, cell.task, options, device)
            say(f"{cell.role}/{cell.task.value}: {', '.join(f'{s} {len(d)}' for s, d in loaded[key].items())} "
                f"questions loaded in {time.perf_counter() - started:.1f} s")
        say(f"{cell.key}: {run_epochs} epochs, {left:.0f} s left")
        history = train(folder, cell.task, options, dest=state / "runs" / cell.key, progress=False,
                        data=loaded[key], deadline=deadline,
                        on_epoch=lambda h, c=cell: say(
                            f"{c.key}: epoch {len(h['epoch_loss'])}/{h['options']['epochs']}: loss "
                            f"{h['epoch_loss'][-1]:.3f}, train {100 * h['train_accuracy'][-1]:.1f} %, val "
                            f"{100 * h['val_accuracy'][-1]:.1f} %, test {100 * h['test_accuracy'][-1]:.1f} % "
                            f"({h['epoch_seconds'][-1]:.1f} s)"))
        speeds.learn(cell, history)
        header = read_header(found[(cell.role, cell.task.value)]["train"])
        done[cell.key] = {"role": cell.role, "dataset": header["dataset"], "history": history,
                          "record": cell_record(cell_of(history), history)}
        write_json(done_path, done)
        write_results(done, results)
        say(f"{cell.key}: test {100 * cell_of(history).test.value:.1f} % after {len(history['epoch_loss'])} epochs "
            f"({history['stopped'] or 'all epochs'}); {deadline - time.monotonic():.0f} s left")
    write_results(done, results)
    say(f"done: {len(done)} cells in {results}")
    return 0


def write_results(done: dict[str, dict], results: Path) -> None:
    """``<config>.json`` per dataset, ``table.md`` and (where it can be drawn) ``figure6.png``."""
    by_dataset: dict[str, dict] = {}
    cells: list[Cell] = []
    for entry in done.values():
        record = entry["dataset"]
        name = record.get("name") or "dataset"
        if by_dataset.get(name, {}).get("dataset", {}).get("role", entry["role"]) != entry["role"]:
            name = f"{name}-{entry['role']}"  # one dataset exported under two roles (a check here)
        entry["result_name"] = name
        poses = {"spare3d": [1, 2, 5, 6], "upper": [1, 2, 3, 4]}.get(record.get("pose_choices"))
        out = by_dataset.setdefault(name, {"dataset": {"config": name, "poses": poses, "role": entry["role"],
                                                       "pose_choices": record.get("pose_choices"),
                                                       "provenance_sha256": record.get("provenance_sha256")},
                                           "cells": []})
        out["cells"].append(entry["record"])
        cells.append(cell_of(entry["history"]))
    for name, content in by_dataset.items():
        write_json(results / f"{name}.json", content)
    lines = ["# Figure 6 at the paper's scale\n"]
    for name, content in by_dataset.items():
        lines.append(f"## {name} (poses {content['dataset']['poses']})\n")
        lines.append(markdown([cell_of(e["history"]) for e in done.values() if e["result_name"] == name]))
    write_text(results / "table.md", "\n".join(lines))
    try:
        from spare_gen.baseline.figure6 import chart_png  # the chart may need a library the device lacks

        write_bytes(results / "figure6.png", chart_png(cells, "Figure 6 at the paper's scale"))
    except ImportError as exc:
        say(f"no chart here ({exc}); draw it from the JSON")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("paper_scale: interrupted", file=sys.stderr)
        sys.exit(130)
