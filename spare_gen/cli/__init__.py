"""The ``spare-gen`` command line: one line per command in ``COMMANDS``, two modules per command.

``spare_gen.cli.options.<module>`` declares what ``--help`` shows: ``EPILOG`` (its input formats, with an example),
optionally ``DESCRIPTION``, and ``add_arguments(parser)``; it imports nothing heavy. ``spare_gen.cli.<module>``
holds ``run(args) -> exit code`` and imports the work it runs. ``spare-gen --help`` imports neither; a command's
``--help`` imports its options module only; ``main`` imports the command's own module only when the command runs,
so help works on the base install (no torch) and a command that needs an extra says so in one line when it runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from spare_gen import console

if console.is_the_command(sys.argv[0]):  # spare-gen itself, not a program importing this package
    console.guard_startup()  # a Ctrl-C during the imports below: one line, exit 130

import argparse  # noqa: E402
import difflib  # noqa: E402
import importlib  # noqa: E402
from types import ModuleType  # noqa: E402

from spare_gen import __version__  # noqa: E402
from spare_gen.cli.common import missing_extra  # noqa: E402
from spare_gen.config import ConfigError  # noqa: E402

# command name -> (module in spare_gen.cli and spare_gen.cli.options, one-line help for `spare-gen --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "regenerate a dataset: models, drawings, questions (and the pool if enabled)"),
    "pool": ("pool", "build a corrupted-wireframe pool for annotation (models + wireframes + pairs)"),
    "config": ("config", "print the resolved, validated config as JSON"),
    "validate": ("validate", "check every dataset rule and file hash; exit 1 on any violation"),
    "metric-report": ("metric_report", "run the metric property ('unit test') report on a pool"),
    "rank": ("rank", "rank pool variants from pairwise judgements; rater reliability; metric agreement"),
    "annotate": ("annotate", "serve the rater web app on a pool; answers go to OUT/annotations/<rater>.csv"),
    "quiz": ("quiz", "serve a dataset's questions to people (SPARE3D's protocols); --simulate for a dry run"),
    "simulate-raters": ("simulate_raters", "write an answers CSV of simulated raters (dry-run a study)"),
    "learn-metric": ("learn_metric", "learn which metric combination predicts the raters; cross-validated"),
    "evaluate": ("evaluate", "score a baseline's predictions on a task split"),
    "evaluate-poses": ("evaluate_poses", "score camera-pose predictions on the random views (TAS/RAS/PAS, ATE)"),
    "audit": ("audit", "question-blind bias probes per task; writes the result into the dataset card"),
    "export-spare3d": ("export_spare3d", "write a dataset in the folder layout the published SPARE3D loaders read"),
    "train-baseline": ("train_baseline", "train SPARE3D's VGG-16, ResNet-50, BagNet-33 or a small CNN; predict test"),
    "learning-curve": ("learning_curve", "accuracy against training-set size: a network, its blank twin, the probe"),
    "export": ("export", "one task split as a compressed .npz of fixed-size arrays"),
    "cache": ("cache", "decode a task's splits once into the training feed's uint8 cache (needs torch)"),
    "show": ("show", "write an HTML page of sample questions (drawings, pose cube, answer toggle)"),
}
DESCRIPTION = "Regenerate SPARE3D-style datasets and corrupted-wireframe pools; validate, score, rank and export them."
EXIT_BAD_INPUT = 2
# commands whose first argument is a folder they read: a missing one is bad input (exit 2), before any work
READS_FOLDER = ("validate", "metric-report", "rank", "annotate", "quiz", "simulate-raters", "learn-metric", "evaluate",
                "evaluate-poses", "audit", "export-spare3d", "train-baseline", "learning-curve", "export", "cache",
                "show")
# of those, the commands that write nothing into it: the others' files go to its ownership ledger (``_recorded``)
ONLY_READS = ("validate",)


def command_module(name: str) -> ModuleType:
    """The module that runs command ``name`` (imported now: it pulls in the job it runs)."""
    return importlib.import_module(f"spare_gen.cli.{COMMANDS[name][0]}")


def options_module(name: str) -> ModuleType:
    """The module that declares command ``name``'s arguments and help (light: argparse and constants)."""
    return importlib.import_module(f"spare_gen.cli.options.{COMMANDS[name][0]}")


def build_parser(only: str | None = None, *, commands: bool = True) -> argparse.ArgumentParser:
    """The whole argparse tree; with ``only``, that command's full parser and the others' names and help; with
    ``commands=False``, every command's name and help alone (``spare-gen --help`` imports no command's options)."""
    parser = argparse.ArgumentParser(prog="spare-gen", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, (_, help_text) in COMMANDS.items():
        if not commands or (only is not None and name != only):
            sub.add_parser(name, help=help_text)
            continue
        module = options_module(name)
        p = sub.add_parser(name, help=help_text, description=getattr(module, "DESCRIPTION", help_text),
                           epilog=module.EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
    return parser


def _command_in(argv: list[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), or None (argparse then explains)."""
    word = next((w for w in argv if not w.startswith("-")), None)
    return word if word in COMMANDS else None


def _parse(parser: argparse.ArgumentParser, name: str | None, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed; an unknown option is the command's own usage error, with the closest option suggested
    (``run --sett x=1``: did you mean --set?)."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        sub = parser._subparsers._group_actions[0].choices[name] if name else parser  # noqa: SLF001 (argparse API)
        options = [o for action in sub._actions for o in action.option_strings]  # noqa: SLF001
        close = difflib.get_close_matches(unknown[0].partition("=")[0], options, n=1)
        sub.error(f"unrecognized arguments: {' '.join(unknown)}" + (f" (did you mean {close[0]}?)" if close else ""))
    return args


def _missing_extra(name: str | None, exc: ModuleNotFoundError) -> int | None:
    """Exit code 2 and one line naming the extra to install, when ``exc`` is an optional dependency's absence."""
    line = missing_extra(exc)
    if line is None:
        return None
    print(f"spare-gen {name}: {line}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _recorded(name: str, args: argparse.Namespace) -> int:
    """Run a command that may write into the dataset folder it reads (train-baseline, quiz, cache, audit, show,
    export ...): every file it writes there goes to the folder's ownership ledger and dataset.json's record of it,
    so a later ``spare-gen run`` knows them as spare_gen's and ``spare-gen validate`` checks them."""
    from spare_gen.store import ownership  # light: no pyarrow
    from spare_gen.store.manifest import rehash_ledger

    with ownership.recording(args.out, after=rehash_ledger):
        return command_module(name).run(args)


def main(argv: list[str] | None = None) -> int:
    """The command line; a Ctrl-C or a closed pipe ends it in one line (``spare_gen.console``)."""
    return console.run_command(lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    name = _command_in(argv)
    try:
        parser = build_parser(only=name, commands=name is not None)
        args = _parse(parser, name, argv)
        if args.command is None:  # a bare `spare-gen` (or options alone): what it can do
            parser.print_help()
            return 0
        if name in READS_FOLDER and not Path(args.out).is_dir():
            print(f"spare-gen {name}: error: folder {args.out!r} does not exist", file=sys.stderr)
            return EXIT_BAD_INPUT
        if name in READS_FOLDER and name not in ONLY_READS:
            return _recorded(name, args)
        return command_module(name).run(args)
    except ModuleNotFoundError as exc:
        code = _missing_extra(name, exc)
        if code is None:
            raise
        return code
    except ConfigError as exc:
        print(f"spare-gen: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (FileNotFoundError, ValueError) as exc:  # incl. an unusable output folder, an unreachable scheduler
        print(f"spare-gen: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
