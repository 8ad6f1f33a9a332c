"""The ``spare-gen`` command line: run the jobs, validate and score datasets."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from spare_gen import __version__
from spare_gen.cli_help import EPILOGS
from spare_gen.config import ConfigError, load_config

DEFAULT_CONFIG = "configs/default.toml"
STAGES = ("models", "drawings", "questions", "pool")


def _config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", "-c", default=None, help=f"TOML recipe (default: {DEFAULT_CONFIG} if present)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set render.size=256 (repeatable)")
    p.add_argument("--out", "-o", default=None, help="output folder (overrides the config's 'out')")
    p.add_argument("--scheduler", default=None, help="tcp://HOST:PORT of a Dask scheduler (default: embedded)")
    p.add_argument("--workers", type=int, default=None, help="embedded LocalCluster workers (default: cores)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def _resolve_config(args):
    path = args.config
    if path is None and Path(DEFAULT_CONFIG).is_file():
        path = DEFAULT_CONFIG
    overrides = list(args.overrides)
    if args.out:
        overrides.append(f"out={json.dumps(args.out)}")
    if args.scheduler:
        overrides.append(f"runner.scheduler={json.dumps(args.scheduler)}")
    if args.workers is not None:
        overrides.append(f"runner.workers={args.workers}")
    if args.no_progress:
        overrides.append("runner.progress=false")
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

    p = sub.add_parser("config", help="print the resolved, validated config as JSON")
    _config_args(p)

    p = sub.add_parser("validate", help="check every dataset rule and file hash; exit 1 on any violation")
    p.add_argument("out")

    p = sub.add_parser("metric-report", help="run the metric property ('unit test') report on a pool")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-models", type=int, default=None)

    p = sub.add_parser("rank", help="rank pool variants from pairwise judgements; rater reliability; metric agreement")
    p.add_argument("out")
    p.add_argument("annotations", help="CSV: pair_id,rater_id,choice (left/right/equal)")
    p.add_argument("--item", choices=("type", "variant"), default="type")

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
        p.epilog = EPILOGS.get(name)
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
                from pipelines.pool import main as pool_main

                pool_main(config)
                return 0
            stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
            bad = [s for s in stages if s not in STAGES]
            if bad:
                raise ConfigError(f"--stages: unknown stage {bad[0]!r}; choose from {', '.join(STAGES)}")
            from pipelines.regenerate import run

            run(config, stages=stages)
            return 0
        if args.command == "validate":
            from spare_gen.questions.validate import main as validate_main

            return validate_main(Path(args.out))
        if args.command == "metric-report":
            from pipelines.metric_report import run as report

            report(Path(args.out), seed=args.seed, max_models=args.max_models)
            return 0
        if args.command == "rank":
            from pipelines.rank import run as rank

            rank(Path(args.out), Path(args.annotations), item=args.item)
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
        return 2
    except (FileNotFoundError, ValueError) as exc:
        print(f"spare-gen: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
