"""The ``spare-gen`` command line: run the jobs, validate and score datasets."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from pathlib import Path

from spare_gen.wireframes.answers_format import ANSWERS_FORMAT
from spare_gen import __version__
from spare_gen.cli_help import EPILOGS
from spare_gen.config import ConfigError, load_config
from spare_gen.config.schema import ClusterKind

DEFAULT_CONFIG = "configs/default.toml"
STAGES = ("models", "drawings", "questions", "pool")
EXIT_BAD_INPUT = 2
EXIT_MACHINE = 75  # EX_TEMPFAIL: the machine failed (disk full, killed processes); rerun to finish
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C


def _stop_on_first_sigint(signum, frame):
    """The first Ctrl-C stops the run; further ones must not interrupt its clean shutdown."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # workers going away is expected now
    raise KeyboardInterrupt


def _run_job(config, stages: tuple[str, ...]) -> int:
    from pipelines.regenerate import run
    from spare_gen.runner.stage import MachineFailure

    previous = signal.signal(signal.SIGINT, _stop_on_first_sigint)
    try:
        run(config, stages=stages)
    except KeyboardInterrupt:
        print(f"spare-gen: interrupted; finished units are kept: rerun the same command to resume "
              f"(output in {config.out})", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MachineFailure as exc:
        print(f"spare-gen: {exc}", file=sys.stderr)
        return EXIT_MACHINE
    finally:
        signal.signal(signal.SIGINT, previous)
    return 0


def _config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", "-c", default=None, help=f"TOML recipe (default: {DEFAULT_CONFIG} if present)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set render.size=256 (repeatable)")
    p.add_argument("--out", "-o", default=None, help="output folder (overrides the config's 'out')")
    p.add_argument("--scheduler", default=None, help="tcp://HOST:PORT of a Dask scheduler (default: embedded)")
    p.add_argument("--workers", type=int, default=None, help="embedded LocalCluster workers (default: cores)")
    p.add_argument("--cluster", default=None, choices=[k.value for k in ClusterKind],
                   help="where the workers come from: local (default), scheduler, or batch jobs (slurm, pbs, sge, lsf) "
                        "set up by [runner.jobqueue]")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def _resolve_config(args):
    path = args.config
    if path is None and Path(DEFAULT_CONFIG).is_file():
        path = DEFAULT_CONFIG
    overrides = list(args.overrides)
    if args.out:
        overrides.append(f"out={json.dumps(args.out)}")
    if args.scheduler:
        overrides += [f"runner.scheduler={json.dumps(args.scheduler)}", f"runner.cluster={ClusterKind.SCHEDULER.value}"]
    if args.cluster:
        overrides.append(f"runner.cluster={args.cluster}")
    if args.workers is not None:
        overrides.append(f"runner.workers={args.workers}")
    if args.no_progress:
        overrides.append("runner.progress=false")
    if getattr(args, "predictions", None):  # spare-gen pool --predictions DIR
        overrides.append(f"pool.predictions={json.dumps(args.predictions)}")
    return load_config(path, overrides)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spare-gen", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="regenerate a dataset: models, drawings, questions (and the pool if enabled)")
    _config_args(p)
    p.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated subset of {','.join(STAGES)}")

    p = sub.add_parser("pool", help="build a corrupted-wireframe pool for annotation (models + wireframes + pairs)")
    _config_args(p)
    p.add_argument("--predictions", default=None, metavar="DIR",
                   help="methods' predicted wireframes, DIR/<method>/<model_id>.json|.obj, mixed into the pool")

    p = sub.add_parser("config", help="print the resolved, validated config as JSON")
    _config_args(p)

    p = sub.add_parser("validate", help="check every dataset rule and file hash; exit 1 on any violation")
    p.add_argument("out")

    p = sub.add_parser("metric-report", help="run the metric property ('unit test') report on a pool")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-models", type=int, default=None, help="use only the pool's first N wireframes")
    p.add_argument("--models", type=int, default=64,
                   help="top the pool's wireframes up to N from further models (0 = the pool's only)")
    p.add_argument("--workers", type=int, default=0, help="Dask workers (0 = one per core)")
    p.add_argument("--scheduler", default="", help="tcp://HOST:PORT of a running Dask scheduler whose workers see OUT "
                                                   "at the same path (default: an embedded cluster of --workers)")

    p = sub.add_parser("rank", help="rank pool variants from pairwise judgements; rater reliability; metric agreement",
                       epilog=ANSWERS_FORMAT, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("annotations", help="answers CSV (pair_id,rater_id,choice[,is_repeat,...]) or a folder of them, "
                                       "e.g. OUT/annotations (format below)")
    p.add_argument("--item", choices=("type", "variant"), default="type")

    # --- annotate (issue 12): the rater web app -------------------------------------------------------------
    p = sub.add_parser(
        "annotate", help="serve the rater web app on a pool; answers go to OUT/annotations/<rater>.csv",
        description=(
            "Serve a local page where raters compare two corrupted wireframes with the ground truth: synchronised\n"
            "rotatable 3D views and the overlay pictures; keys left arrow or 1 = left, right arrow or 3 = right,\n"
            "down arrow or 2 = equal. Each rater (URL ?rater=NAME) gets their own random order, sanity and repeat\n"
            "pairs; every answer is appended and fsync'ed at once, and a rater who comes back continues where they\n"
            "stopped. Rank the answers with `spare-gen rank OUT OUT/annotations`."
        ),
        epilog=ANSWERS_FORMAT, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("out", help="a pool folder (pairs.parquet, corruptions.parquet, wireframes.parquet)")
    p.add_argument("--port", type=int, default=8765, help="TCP port (default 8765)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--rater", default=None, help="rater name used when the URL has no ?rater= (default: ask)")
    p.add_argument("--sanity", type=int, default=40, help="sanity pairs per rater, drawn from the pool's (default 40)")
    p.add_argument("--repeat-fraction", type=float, default=0.05,
                   help="share of a rater's pairs shown a second time, some sides swapped (default 0.05)")
    p.add_argument("--break-every", type=int, default=350, help="break prompt every N answers (default 350; 0 never)")

    p = sub.add_parser("simulate-raters", help="write an answers CSV of simulated raters (dry-run a study)")
    p.add_argument("out", help="pool output folder (pairs.parquet, corruptions.parquet)")
    p.add_argument("--raters", default="0.9,0.9,0.9,0.9,0.9", help="accuracies of one group, comma-separated")
    p.add_argument("--truth", default="edge_f1", help="hidden preference: metric mix, e.g. 'edge_f1=0.7,corner_f1=0.3'")
    p.add_argument("--group", action="append", default=None,
                   help="ACCURACIES:TRUTH, repeatable (replaces --raters/--truth), e.g. '0.9,0.9:corner_f1'")
    p.add_argument("--answers", default=None, help="CSV to write (default <out>/pool/simulated_answers.csv)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tie-margin", type=float, default=0.0, help="hidden qualities this close are 'equal'")

    p = sub.add_parser("learn-metric", help="learn which metric combination predicts the raters; cross-validated")
    p.add_argument("out", help="pool output folder (pairs.parquet, corruptions.parquet)")
    p.add_argument("answers", help="answers CSV (or folder of CSVs): pair_id,rater_id,choice")
    p.add_argument("--metrics", default="", help="comma-separated metric columns to use (default: all)")
    p.add_argument("--folds", type=int, default=5)

    p = sub.add_parser("evaluate", help="score a baseline's predictions on a task split")
    p.add_argument("out")
    p.add_argument("predictions", help="CSV: question_id,answer")
    p.add_argument("--task", required=True)
    p.add_argument("--split", default="test")
    p.add_argument("--lenient", action="store_true", help="count unknown/missing/invalid predictions as wrong (warn)")

    p = sub.add_parser("evaluate-poses", help="score camera-pose predictions on the random views (TAS/RAS/PAS, ATE)")
    p.add_argument("out")
    p.add_argument("predictions", help="CSV or Parquet: model_id,view,rotation (9 values),position (3 values)")

    p = sub.add_parser("audit", help="question-blind bias probes per task; writes the result into the dataset card")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=0)

    p = sub.add_parser("export-spare3d", help="write a dataset in the folder layout the published SPARE3D loaders read")
    p.add_argument("out", help="the generated dataset")
    p.add_argument("dest", help="an empty or new folder, or an earlier export to resume")
    p.add_argument("--tasks", nargs="+", default=None, help="task names (default: every task in the dataset)")
    p.add_argument("--splits", nargs="+", default=None, help="train val test (default: all three)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")

    p = sub.add_parser("train-baseline", help="train a small CNN from scratch on a multiple-choice task; predict test")
    p.add_argument("out", help="the generated dataset")
    p.add_argument("--task", required=True)
    p.add_argument("--dest", default=None, help="output folder (default: OUT/baselines/TASK)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--size", type=int, default=64, help="images resized to SIZE x SIZE")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0 = all epochs)")
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--channels", default="rgb", help="rgb or bgr")
    p.add_argument("--device", default="auto", help="auto (a GPU if present), cpu, cuda, ...")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = sub.add_parser("export", help="one task split as a compressed .npz of fixed-size arrays")
    p.add_argument("out")
    p.add_argument("--task", required=True)
    p.add_argument("--split", default="train")
    p.add_argument("--size", type=int, default=64, help="square image side in pixels")
    p.add_argument("--dest", default=None, help="output .npz (default: <out>/exports/<task>_<split>_<size>.npz)")

    p = sub.add_parser("show", help="write an HTML page of sample questions (drawings, pose cube, answer toggle)")
    p.add_argument("out")
    p.add_argument("--task", default=None, help="one task (default: every task present)")
    p.add_argument("--n", type=int, default=8, help="questions per task (default 8)")
    p.add_argument("--split", default="test", help="split to sample from (default test; train/val/test)")
    p.add_argument("--dest", default=None, help="output HTML (default: <out>/show/index.html)")

    for name, p in sub.choices.items():  # every subcommand's input formats, with an example
        p.formatter_class = argparse.RawDescriptionHelpFormatter
        # a format set with the parser (annotate, rank: the answers file) comes first, then the example
        p.epilog = "\n\n".join(text for text in (p.epilog, EPILOGS.get(name)) if text) or None
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command in ("run", "pool", "config"):
            config = _resolve_config(args)
            if args.command == "config":
                print(json.dumps(config.model_dump(mode="json"), indent=2))
                return 0
            if args.command == "pool":
                from pipelines.regenerate import POOL_STAGES

                return _run_job(config, POOL_STAGES)
            stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
            bad = [s for s in stages if s not in STAGES]
            if bad:
                raise ConfigError(f"--stages: unknown stage {bad[0]!r}; choose from {', '.join(STAGES)}")
            return _run_job(config, stages)
        if args.command == "validate":
            from spare_gen.validate import main as validate_main

            return validate_main(Path(args.out))
        if args.command == "metric-report":
            from pipelines.metric_report import run as report

            report(Path(args.out), seed=args.seed, max_models=args.max_models, models=args.models, workers=args.workers,
                   scheduler=args.scheduler)
            return 0
        if args.command == "rank":
            from pipelines.rank import run as rank

            rank(Path(args.out), Path(args.annotations), item=args.item)
            return 0
        if args.command == "annotate":
            from spare_gen.annotate.plan import Settings
            from spare_gen.annotate.server import serve

            settings = Settings(sanity=args.sanity, repeat_fraction=args.repeat_fraction, break_every=args.break_every)
            return serve(Path(args.out), host=args.host, port=args.port, rater=args.rater, settings=settings)
        if args.command == "simulate-raters":
            from pipelines.simulate_raters import parse_group
            from pipelines.simulate_raters import run as simulate

            groups = [parse_group(g) for g in args.group] if args.group else [parse_group(f"{args.raters}:{args.truth}")]
            simulate(Path(args.out), groups=groups, answers=args.answers, seed=args.seed, tie_margin=args.tie_margin)
            return 0
        if args.command == "learn-metric":
            from pipelines.learn_metric import run as learn

            metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] or None
            learn(Path(args.out), Path(args.answers), metrics=metrics, folds=args.folds)
            return 0
        if args.command == "evaluate":
            from spare_gen.data.evaluate import main as evaluate_main

            return evaluate_main(Path(args.out), args.task, args.split, Path(args.predictions), lenient=args.lenient)
        if args.command == "evaluate-poses":
            from spare_gen.data.evaluate_poses import main as poses_main

            return poses_main(Path(args.out), Path(args.predictions))
        if args.command == "audit":
            from spare_gen.audit.probes import main as audit_main

            return audit_main(Path(args.out), seed=args.seed)
        if args.command == "export-spare3d":
            from spare_gen.export.spare3d import main as export_main

            return export_main(Path(args.out), Path(args.dest), args.tasks, args.splits, progress=not args.no_progress)
        if args.command == "train-baseline":
            try:
                from spare_gen.baseline.train import TrainOptions, main as train_main
            except ImportError as exc:
                raise ConfigError(f"train-baseline: {exc}") from None
            options = TrainOptions(epochs=args.epochs, batch_size=args.batch_size, size=args.size, lr=args.lr,
                                   seed=args.seed, max_steps=args.max_steps, workers=args.workers,
                                   channels=args.channels, device=args.device)
            return train_main(Path(args.out), args.task, options, Path(args.dest) if args.dest else None,
                              progress=not args.no_progress)

        if args.command == "export":
            from pipelines.export import main as export_main

            return export_main([args.out, "--task", args.task, "--split", args.split, "--size", str(args.size),
                                *(["--dest", args.dest] if args.dest else [])])
        if args.command == "show":
            from spare_gen.viewer.page import main as show_main

            return show_main(Path(args.out), task=args.task, n=args.n, split=args.split,
                             dest=Path(args.dest) if args.dest else None)
    except ConfigError as exc:
        print(f"spare-gen: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (FileNotFoundError, ValueError) as exc:  # incl. an unusable output folder, an unreachable scheduler
        print(f"spare-gen: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
