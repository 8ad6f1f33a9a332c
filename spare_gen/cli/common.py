"""What several commands share: exit codes, the config options, running the main job, the input texts of --help."""

from __future__ import annotations

import argparse
import errno
import json
import signal
import sys
from pathlib import Path
from typing import Callable

from spare_gen.config import ConfigError, load_config
from spare_gen.console import EXIT_INTERRUPTED
from spare_gen.config.schema import ClusterKind, Config
from spare_gen.config.loader import DEFAULT_CONFIG_FILE
from spare_gen.store.preflight import check_output_path

EXIT_BAD_INPUT = 2
# optional dependencies a command may need, and the extra that installs each (as the README installs: from the clone)
EXTRAS = {"torch": "torch", "transformers": "torch", "dask_jobqueue": "cluster"}
EXIT_MACHINE = 75  # EX_TEMPFAIL: the machine failed (disk full, killed processes); rerun to finish
# OSErrors of the machine, not of the input: a write of the main process that meets one is a machine failure
MACHINE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS)

CONFIG_INPUT = """input: a TOML recipe (every key, type, range and default in spare_gen/config/schema.py), e.g.

  seed = 0
  out = "outputs/default"
  [models.csg]
  count = 240
  [questions]
  split = [0.8, 0.1, 0.1]        # train, val, test fractions, summing to 1
  [questions.counts]
  three_view_to_isometric = 40
  [card]
  license = "cc-by-4.0"

  --set KEY=VALUE takes a TOML literal: --set render.size=256 --set models.csg.primitive_counts=[3,4]
  A bad config stops before any work: one line naming the file or --set argument, key and value; exit 2."""

DATASET_INPUT = """input: OUT is a dataset folder written by `spare-gen run` (dataset.json, models.parquet, questions/<task>/
{train,val,test}.parquet, drawings/...), e.g. outputs/default"""


def add_worker_arguments(p: argparse.ArgumentParser, work: str) -> None:
    """--workers and --scheduler of the commands that read a dataset and run ``work`` on Dask workers."""
    p.add_argument("--workers", type=int, default=0, help=f"Dask workers that {work} (0 = one per core)")
    p.add_argument("--scheduler", default="", help="tcp://HOST:PORT of a running Dask scheduler whose workers see OUT "
                                                   "at the same path (default: an embedded cluster of --workers)")


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """The options of the commands that run or show a config: -c, --set, --out, --scheduler, --workers, --cluster,
    --no-progress."""
    p.add_argument("--config", "-c", default=None,
                   help="TOML recipe (default: the built-in one, the same as configs/default.toml in the repository)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set render.size=256 (repeatable)")
    p.add_argument("--out", "-o", default=None, help="output folder (overrides the config's 'out')")
    p.add_argument("--scheduler", default=None, help="tcp://HOST:PORT of a Dask scheduler (default: embedded)")
    p.add_argument("--workers", type=int, default=None, help="embedded LocalCluster workers (default: cores)")
    p.add_argument("--cluster", default=None, choices=[k.value for k in ClusterKind],
                   help="where the workers come from: local (default), scheduler, or batch jobs (slurm, pbs, sge, lsf) "
                        "set up by [runner.jobqueue]")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress (a bar on a terminal, a plain line every 30 s in a pipe or log)")


def resolve_config(args: argparse.Namespace) -> Config:
    """The config the options name, with --out/--scheduler/--workers/--cluster/--no-progress applied as overrides."""
    path = args.config if args.config is not None else DEFAULT_CONFIG_FILE
    overrides = list(args.overrides)
    if args.out is not None:  # a plain path, taken as given (never re-quoted): checked before anything else
        check_output_path(args.out)
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
    return load_config(path, overrides, out=args.out)


DEFAULT_CONFIG_LABEL = "configs/default.toml"  # what the README calls it; the package ships the same bytes


def config_line(args: argparse.Namespace) -> str:
    """The line that names the config a run uses: the file given with --config, or the built-in defaults."""
    if args.config is not None:
        return f"spare-gen: config {args.config}"
    return f"spare-gen: config: built-in defaults ({DEFAULT_CONFIG_LABEL}: {DEFAULT_CONFIG_FILE})"


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The line that names the extra to install, when ``exc`` is an optional dependency's absence; else None."""
    extra = EXTRAS.get((exc.name or "").split(".")[0])
    if extra is None:
        return None
    return f'needs the optional dependency {exc.name!r}: pip install -e ".[{extra}]" (in the repository)'


def script_main(main: Callable[[], int]) -> None:
    """Run a ``pipelines/`` script: bad input (a config error, too few models, a missing folder) or a missing extra
    (torch) is one line naming it and exit code 2, as for the commands; a Ctrl-C is one line and exit code 130, even
    when the script was started with SIGINT ignored (``cmd &`` in a script)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code = main()
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        print(f"{Path(sys.argv[0]).name}: {exc}", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except ModuleNotFoundError as exc:
        line = missing_extra(exc)
        if line is None:
            raise
        print(f"{Path(sys.argv[0]).name}: {line}", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{Path(sys.argv[0]).name}: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    sys.exit(code)
