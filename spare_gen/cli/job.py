"""Running the main job from a command: one line and an exit code for an interruption or a machine failure.

Apart from :mod:`spare_gen.cli.common` so that the commands and pipelines that only read a dataset
(`spare-gen train-baseline`, `pipelines/reproduce_spare3d_figure6.py`) import no stage, and through the stages no
aggdraw, Dask or OCP.
"""

from __future__ import annotations

import logging
import signal
import sys

from spare_gen.cli.common import EXIT_MACHINE, MACHINE_ERRNOS
from spare_gen.console import Stopped, stop_line, stopped_by
from spare_gen.config.schema import Config
from spare_gen.jobs.regenerate import run
from spare_gen.runner.cluster import STOP_SIGNALS
from spare_gen.runner.stage import MachineFailure


def _stop_on_first_signal(signum, frame):
    """The first SIGINT or SIGTERM stops the run; further ones must not interrupt its clean shutdown."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # workers going away is expected now
    raise Stopped(signum)


def run_job(config: Config, stages: tuple[str, ...], announce: str = "") -> int:
    """Run the main job's ``stages``; an interruption (SIGINT or SIGTERM, to the process group or to this process
    alone) or a machine failure is one line and its exit code (128 + the signal, or 75).

    ``announce`` (``config_line``) is the run's first line once it starts (a bad output folder or scheduler
    stays one line)."""
    previous = {s: signal.signal(s, _stop_on_first_signal) for s in STOP_SIGNALS}
    try:
        run(config, stages=stages, announce=announce)
    except KeyboardInterrupt as exc:
        return _stopped(config, exc.signum if isinstance(exc, Stopped) else signal.SIGINT, previous)
    except MachineFailure as exc:
        print(f"spare-gen: {exc}", file=sys.stderr)
        return EXIT_MACHINE
    except OSError as exc:
        if exc.errno not in MACHINE_ERRNOS:
            raise
        print(f"spare-gen: the machine failed writing {exc.filename or config.out} ({exc.strerror}); finished units "
              f"are kept: rerun the same command to finish once it is fixed", file=sys.stderr)
        return EXIT_MACHINE
    except Exception:
        signum = stopped_by()
        if signum is None:
            raise
        return _stopped(config, signum, previous)  # a library turned the Stopped into its own error
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 0


def _stopped(config: Config, signum: int, previous: dict) -> int:
    """The stop's one line and exit code; a second Ctrl-C while the process exits says nothing more."""
    for s in previous:
        previous[s] = signal.SIG_IGN
    print(f"{stop_line(signum)}; finished units are kept: rerun the same command to resume (output in {config.out})",
          file=sys.stderr)
    return 128 + signum
