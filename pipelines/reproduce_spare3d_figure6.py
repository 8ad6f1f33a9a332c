"""Reproduce SPARE3D's Figure 6: train the paper's baselines on spare_gen data and set each beside the paper's value.

    python pipelines/reproduce_spare3d_figure6.py --out outputs/figure6              # generate, then train all cells
    python pipelines/reproduce_spare3d_figure6.py --dataset outputs/spare3d_csg --cells isometric_to_pose --bf16
    python pipelines/reproduce_spare3d_figure6.py --dataset outputs/default --device cpu \
        --size 36 --epochs 2 --questions 8 --batch-size 8     # every cell, tiny: 7 min of CPU, 18 min on 2 busy cores
    python pipelines/reproduce_spare3d_figure6.py --dataset outputs/default --device cpu --cells isometric_to_pose \
        --archs resnet50 --no-blank --size 36 --epochs 1 --questions 8 --batch-size 8   # one cell: a quick try

Without ``--dataset`` it first generates the data with ``--config`` (default ``configs/spare3d_csg_original.toml``,
the original's choices; ``--set`` overrides any key) into ``--out``. Then it trains the chosen Figure 6 cells with
their recipes (``spare-gen train-baseline``'s), a classes task also with F, R and T blanked (blank paper, no
ink), and writes ``figure6.md`` (one table: the networks and people, this dataset's and the paper's, people's from
``DATASET/reports/humans.json`` when it exists, see `spare-gen quiz`), ``figure6.png`` (bar chart; ``.svg`` and
``.pdf`` beside it), ``figure6.json`` and
each cell's run under ``DATASET/figure6/`` (or ``--dest``), the table and JSON rewritten after each cell. Each task's
splits are decoded once, on the GPU when there is one. ``--dataset`` may also be a folder of exported caches
(``spare-gen cache --export``), which trains with no PNG and no dataset. ``--protocol spare3d`` evaluates as SPARE3D's
trainers did (the best epoch's test accuracy; the isometric drawing as R where their glob picks it). Each epoch
prints one line; a Ctrl-C (or a SIGINT, however the script was started) ends the run within seconds with one line
and exit code 130. Needs the torch extra: without it, one line and exit code 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spare_gen.atomic import write_bytes, write_json, write_text
from spare_gen.baseline.figure6 import (
    cell_of, cell_record, chart_files, markdown, people_record, people_rows, read_humans,
)
from spare_gen.baseline.options import FIGURE6, hypotheses_tasks, Arch, Formulation, Protocol, TrainOptions
from spare_gen.cli.common import script_main
from spare_gen.config.schema import TaskName
from spare_gen.stages.questions.layout import AnswerSide
from spare_gen.stages.questions.tasks import TASK_SPECS

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "spare3d_csg_original.toml"
NAME = Path(__file__).name


def epoch_line(name: str, history: dict) -> str:
    """One progress line for an epoch that ended."""
    done, total = len(history["epoch_loss"]), history["options"]["epochs"]
    pct = {k: 100 * history[f"{k}_accuracy"][-1] for k in ("train", "val", "test")}
    return (f"{NAME}: {name}: epoch {done}/{total}: loss {history['epoch_loss'][-1]:.3f}, train {pct['train']:.1f} %, "
            f"val {pct['val']:.1f} %, test {pct['test']:.1f} % ({history['epoch_seconds'][-1]:.1f} s)")


def compared_with(cell, history: dict) -> str:
    """What a cell's test accuracy stands beside: the paper's cell, or, for a run with F, R, T blank (the paper has
    none), the same cell with the views and chance."""
    if cell.paper_test is not None:
        return f"paper {cell.paper_test:.1f} %"
    chance = f"chance {100 * history['test']['chance']:.0f} %"
    if cell.blank_views:
        return f"no paper cell: compare with {cell.task.value}-{cell.formulation.value}-{cell.arch.value} and {chance}"
    return f"no paper cell; {chance}"


def chosen_cells(patterns: list[str], archs: list[str]) -> list[tuple[TaskName, Formulation, Arch]]:
    """Figure 6 cells matching any ``task[:formulation]`` pattern (``all`` for every one), for the chosen archs."""
    cells = []
    # spare_gen's CPU network beside the paper's (not in Figure 6: no paper value): `--archs hypotheses`
    known = [(r.task, r.formulation, r.arch) for r in FIGURE6] + [
        (t, Formulation.MULTICLASS, Arch.HYPOTHESES) for t in hypotheses_tasks()]
    for task_, formulation_, arch_ in known:
        if arch_.value not in archs:
            continue
        for pattern in patterns:
            task, _, formulation = pattern.partition(":")
            if pattern == "all" or (task == task_.value and formulation in ("", formulation_.value)):
                cells.append((task_, formulation_, arch_))
                break
    if not cells:
        raise ValueError(f"--cells {' '.join(patterns)}: no Figure 6 cell matches (use all, or task[:formulation] "
                         f"with task in {', '.join(sorted({r.task.value for r in FIGURE6}))})")
    return cells


def generate(config: Path, out: Path, overrides: list[str]) -> Path:
    from spare_gen.config import load_config  # generation needs OCP and Dask; training alone does not
    from spare_gen.jobs.regenerate import run

    if not config.is_file():
        raise FileNotFoundError(f"{config}: no such config (pass --config, or --dataset for existing data)")
    run(load_config(config, [f"out={json.dumps(str(out))}", *overrides]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--dataset", default=None,
                        help="an existing dataset, or a folder of its exported caches (skips generation)")
    parser.add_argument("--config", default=str(CONFIG), help="config to generate the data with")
    parser.add_argument("--out", default="outputs/spare3d_figure6", help="where to generate the data")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="config override for the generation")
    parser.add_argument("--dest", default=None, help="results folder (default: DATASET/figure6)")
    parser.add_argument("--cells", nargs="+", default=["all"], help="all, or task[:formulation] patterns")
    parser.add_argument("--archs", nargs="+", default=[a.value for a in (Arch.RESNET50, Arch.VGG16, Arch.BAGNET33)],
                        choices=[a.value for a in Arch if a is not Arch.SMALL], help="architectures to train")
    parser.add_argument("--no-blank", action="store_true", help="skip the isometric-to-pose runs with F, R, T blank")
    for name, kind in (("epochs", int), ("batch-size", int), ("lr", float), ("size", int), ("max-steps", int)):
        parser.add_argument(f"--{name}", type=kind, default=None, help="override every cell's recipe")
    parser.add_argument("--questions", type=int, default=None, metavar="N",
                        help="only each split's first N questions (a quick run)")
    parser.add_argument("--protocol", choices=[p.value for p in Protocol], default=Protocol.SPARE_GEN.value,
                        help="spare_gen: best epoch on val, reported on test; spare3d: as SPARE3D's trainers")
    parser.add_argument("--device", default="auto", help="auto (a GPU if present), cpu, cuda")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast (GPUs)")
    parser.add_argument("--workers", type=int, default=0, help="decoding worker processes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    chosen_cells(args.cells, args.archs)  # a pattern that matches no cell: one line, before any work
    # torch before any work: a machine without it hears so at once, not after the generation
    import spare_gen.baseline.train  # noqa: F401
    out = Path(args.dataset) if args.dataset else generate(Path(args.config), Path(args.out), args.overrides)
    if not out.is_dir():
        raise FileNotFoundError(f"{out}: no such dataset folder")
    from spare_gen.store import ownership
    from spare_gen.store.manifest import rehash_ledger

    with ownership.recording(out, after=rehash_ledger):  # what it writes into the dataset: spare_gen's, recorded
        return train_cells(args, out)


def train_cells(args: argparse.Namespace, out: Path) -> int:
    """Train the chosen Figure 6 cells on the dataset at ``out``; the table, chart and runs go to ``--dest``."""
    from spare_gen.baseline.train import load_splits, pick_device, train  # torch only from here

    cells = chosen_cells(args.cells, args.archs)
    dest = Path(args.dest) if args.dest else out / "figure6"
    device = pick_device(args.device)
    runs = [(task, formulation, arch, False) for task, formulation, arch in cells]
    if not args.no_blank:
        runs += [(t, f, a, True) for t, f, a in cells if TASK_SPECS[t].answer_side is AnswerSide.CLASSES]
    overrides = {"epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr, "size": args.size,
                 "questions": args.questions}
    decoded: dict[tuple, dict] = {}
    results, records = [], []
    for task, formulation, arch, blank in runs:
        options = TrainOptions(arch=arch, formulation=formulation, seed=args.seed, max_steps=args.max_steps or 0,
                               workers=args.workers, device=args.device, bf16=args.bf16, blank_views=blank,
                               protocol=Protocol(args.protocol),
                               **{k: v for k, v in overrides.items() if v is not None}).resolved(task)
        key = (task, options.size, options.channels)
        if key not in decoded:
            decoded[key] = load_splits(out, task, options, device)
        name = f"{task.value}-{formulation.value}-{arch.value}{'-blank' if blank else ''}"
        history = train(out, task, options, dest=dest / name, progress=False, data=decoded[key],
                        on_epoch=lambda h, name=name: print(epoch_line(name, h), flush=True))
        cell = cell_of(history)
        results.append(cell)
        records.append(cell_record(cell, history))
        print(f"{NAME}: {name}: test {100 * cell.test.value:.1f} % at epoch {cell.epoch} "
              f"({compared_with(cell, history)}), "
              f"{cell.samples_per_second:.3g} questions/s on {cell.device}", flush=True)
        table = markdown(results)  # after each cell: what finished survives a stopped run
        write_text(dest / "figure6.md", f"# SPARE3D Figure 6 on `{out}`\n\n{table}")
        write_json(dest / "figure6.json", records)
    people = people_rows(read_humans(out), [c.task for c in results])  # `spare-gen evaluate`'s and the paper's
    table = markdown(results, people)
    write_text(dest / "figure6.md", f"# SPARE3D Figure 6 on `{out}`\n\n{table}")
    write_json(dest / "figure6.json", records + [people_record(r) for r in people])
    title = f"SPARE3D Figure 6 on {out.name}: {results[0].device}"
    for suffix, data in chart_files(results, title, people).items():
        write_bytes(dest / f"figure6{suffix}", data)
    print(table)
    print(f"{NAME}: table, chart and runs in {dest}")
    return 0


if __name__ == "__main__":
    script_main(main)
