"""Dask clients: an embedded LocalCluster, a running scheduler, or batch jobs (SLURM, PBS, SGE, LSF) via dask-jobqueue."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path
from typing import Iterator

from spare_gen.config.schema import JOBQUEUE_KINDS, ClusterKind, RunnerConfig
from spare_gen.console import STOP_SIGNALS  # noqa: F401 (re-exported: declared once, in console)

CONNECT_TIMEOUT_S = 15
SENTINEL_S = 3600  # longest embedded-cluster start-up whose Ctrl-C is caught (the sentinel's life)
WORKER_WAIT_S = 60
# Background work of an embedded cluster, which competes with the OCCT children for the cores: the statistical
# profiler (a stack sample every 10 ms per worker, for the dashboard's profile page; the work runs in the child
# anyway) off, and the event-loop tick and monitors at human rather than millisecond intervals. Idle cluster of
# 2 workers: 11% of a core -> 1.5%.
QUIET_WORKERS = {
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "500ms",
}


class ClusterError(ValueError):
    """A cluster that cannot run the job (one line): an unreachable scheduler, workers that cannot import spare_gen
    or see the output folder, a queue system that refuses or never starts the jobs."""


PROBE_PREFIX = ".spare_gen-shared-probe-"
JOBQUEUE_CLASSES = {ClusterKind.SLURM: "SLURMCluster", ClusterKind.PBS: "PBSCluster", ClusterKind.SGE: "SGECluster",
                    ClusterKind.LSF: "LSFCluster"}
# SGE and LSF charge a "project" where SLURM and PBS charge an "account"
ACCOUNT_KEYWORD = {ClusterKind.SLURM: "account", ClusterKind.PBS: "account", ClusterKind.SGE: "project",
                   ClusterKind.LSF: "project"}
# Per-thread BLAS/OpenMP pools off on batch nodes as on the embedded workers: one thread per worker process
ONE_THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _worker_check() -> str:
    """Runs on every worker: can it import the stage runner (and so spare_gen)?"""
    import spare_gen.runner.stage  # noqa: F401

    return "ok"


def _check_workers(client, scheduler: str) -> None:
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except Exception:
        raise ClusterError(f"Dask scheduler {scheduler}: no worker joined within {WORKER_WAIT_S} s") from None
    _check_spare_gen(client, scheduler)


def _check_spare_gen(client, where: str) -> None:
    try:
        client.run(_worker_check)
    except Exception as exc:
        raise ClusterError(f"{where}: its workers cannot run spare_gen "
                           f"({type(exc).__name__}: {exc}); install spare_gen on every worker") from None


def read_probe(path: str, token: str) -> str:
    """Runs on a worker: '' if it sees the probe file with the client's token, else why not (a few words)."""
    try:
        seen = Path(path).read_text(encoding="ascii")
    except FileNotFoundError:
        return f"no file {Path(path).name} there"
    except OSError as exc:
        return f"cannot read {Path(path).name}: {exc.strerror or exc}"
    return "" if seen == token else f"{Path(path).name} holds other content"


def _probe_on(client, path: str, token: str, workers: list[str] | None = None) -> dict[str, str]:
    """Every (or the given) worker's answer to read_probe, keyed by worker address."""
    return client.run(read_probe, path, token, workers=workers)


def check_shared_folder(client, out: Path, where: str) -> None:
    """The output folder must be on a file system every worker sees at the same path: the client writes a probe
    file there, each worker reads it back; raise ClusterError (one line) naming a worker that cannot."""
    out = Path(out)
    token = secrets.token_hex(16)
    probe = out / f"{PROBE_PREFIX}{token[:12]}"
    probe.write_text(token, encoding="ascii")
    try:
        answers = _probe_on(client, str(probe), token)
    finally:
        probe.unlink(missing_ok=True)
    blind = sorted((addr, why) for addr, why in answers.items() if why)
    if blind:
        addr, why = blind[0]
        host = client.scheduler_info()["workers"].get(addr, {}).get("host", addr)
        others = f" (and {len(blind) - 1} more of {len(answers)} workers)" if len(blind) > 1 else ""
        raise ClusterError(f"output folder {out} is not visible to the Dask worker {addr} on {host} ({why}){others}: "
                           f"{where} needs it on a file system every worker shares, at the same path")


@contextlib.contextmanager
def _stop_signals_held() -> Iterator[None]:
    """While the embedded cluster starts, its worker processes are spawned ignoring SIGINT (they inherit that: a
    Ctrl-C to the terminal's process group stops the client, which stops them), yet a Ctrl-C then must not be lost,
    or the run would go on: a sentinel process in the same process group (``sleep``) dies of it, and once the
    cluster has started the Ctrl-C is raised here (the caller closes the cluster as it unwinds). A SIGTERM meanwhile
    is held and delivered then too. (A SIGINT sent to this process alone in those seconds is ignored; SIGTERM is
    not.)"""
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    sentinel = subprocess.Popen([shutil.which("sleep") or "sleep", str(SENTINEL_S)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    held: list[int] = []
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN),
                signal.SIGTERM: signal.signal(signal.SIGTERM, lambda signum, frame: held.append(signum))}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if sentinel.poll() is None:
            sentinel.kill()
        if sentinel.wait() == -signal.SIGINT:
            held.insert(0, signal.SIGINT)
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)  # to the handler the caller had (the run's: stop with one line)


def dashboard_available() -> bool:
    """Dask serves its dashboard only when bokeh (>= 3.1) is importable; without it the link is a dead page."""
    try:
        import bokeh  # noqa: F401
    except ImportError:
        return False
    return True


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


@contextlib.contextmanager
def open_client(scheduler: str = "", workers: int = 0, dashboard: bool = True, quiet: bool = False,
                shared: Path | None = None, intro: str = "") -> Iterator:
    """Yield a ``distributed.Client``: to ``scheduler`` if given, else to a fresh embedded LocalCluster.

    ``intro`` is printed before the client's own lines, once a scheduler answered (an unreachable one is one line).

    Embedded workers are processes with one thread each (OCCT holds the GIL) and are not daemonic,
    so each can keep its own killable OCCT child process. With a scheduler, ``shared`` (the output folder)
    must be visible to every worker (check_shared_folder).
    """
    import dask
    from distributed import Client, LocalCluster

    say = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr))
    if scheduler:
        try:
            client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler {scheduler} ({type(exc).__name__}: {exc})") from None
        try:
            _check_workers(client, scheduler)
            if shared is not None:
                check_shared_folder(client, shared, f"Dask scheduler {scheduler}")
        except ClusterError:
            client.close()
            raise
        if intro:
            say(intro)
        say(f"spare-gen: connected to Dask scheduler {scheduler} ({len(client.scheduler_info()['workers'])} workers)")
        try:
            yield client
        finally:
            client.close()
        return
    n = workers or default_workers()
    if intro:
        say(intro)
    if dashboard and not dashboard_available():
        say("spare-gen: Dask dashboard off: bokeh>=3.1 is not installed (pip install 'bokeh>=3.1')")
        dashboard = False
    with dask.config.set({"distributed.worker.daemon": False, **QUIET_WORKERS}), contextlib.ExitStack() as opened:
        with _stop_signals_held():
            cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # a free port; never the shared default 8787
                scheduler_kwargs=None if dashboard else {"dashboard": False},
                silence_logs=logging.CRITICAL,  # a Ctrl-C or a lost worker is reported once, by spare-gen
            )
            opened.callback(cluster.close)  # also when a held Ctrl-C is delivered as this block ends
        client = opened.enter_context(Client(cluster))
        link = client.dashboard_link if dashboard else "off"
        say(f"spare-gen: embedded Dask LocalCluster with {n} worker(s), 1 thread each; dashboard {link}")
        yield client


def _spare_gen_path() -> str:
    """The folder holding the spare_gen package this client runs, when it is not an installed package."""
    here = Path(__file__).resolve().parents[2]
    installed = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    return "" if here in installed else str(here)


def _quiet_worker_env() -> list[str]:
    """QUIET_WORKERS and one BLAS thread as shell exports for a batch job (Dask reads DASK_* variables)."""
    lines = []
    for key, value in QUIET_WORKERS.items():
        name = "DASK_" + key.upper().replace(".", "__").replace("-", "_")
        lines.append(f"export {name}={str(value).lower() if isinstance(value, bool) else value}")
    lines += [f"export {name}=1" for name in ONE_THREAD_ENV]
    return lines


def job_prologue(runner: RunnerConfig) -> list[str]:
    """Shell lines of each batch job before its worker starts: spare_gen importable, quiet single-threaded
    workers, then the user's own lines (module loads, a virtual environment)."""
    path = _spare_gen_path()
    lines = [f'export PYTHONPATH={path}${{PYTHONPATH:+:$PYTHONPATH}}'] if path else []
    return lines + _quiet_worker_env() + list(runner.jobqueue.job_script_prologue)


def queue_walltime(kind: ClusterKind, walltime: str) -> str:
    """runner.jobqueue.walltime ([D-]HH:MM[:SS]) as the queue system reads it: SLURM takes it as written, PBS and
    SGE take HH:MM:SS, LSF takes HH:MM (seconds rounded up to a minute)."""
    days, _, clock = walltime.rpartition("-")
    parts = [int(x) for x in clock.split(":")] + [0]
    hours, minutes, seconds = parts[0] + 24 * int(days or 0), parts[1], parts[2]
    if kind is ClusterKind.SLURM:
        return walltime
    if kind is ClusterKind.LSF:
        minutes += 1 if seconds else 0
        return f"{hours + minutes // 60:02d}:{minutes % 60:02d}"
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}"


def jobqueue_cluster(runner: RunnerConfig, dashboard: bool = False):
    """A dask-jobqueue cluster for runner.cluster (slurm, pbs, sge, lsf) from runner.jobqueue; no job submitted yet.

    Each job runs ``cores`` worker processes with one thread each (OCCT holds the GIL; each worker keeps its
    own killable OCCT child process).
    """
    kind = runner.cluster
    cls = _jobqueue_class(kind)
    jq = runner.jobqueue
    kwargs = dict(
        cores=jq.cores,
        processes=jq.cores,  # one single-threaded worker process per core
        memory=jq.memory,
        walltime=queue_walltime(kind, jq.walltime),
        queue=jq.queue or None,
        job_name=jq.job_name,
        job_extra_directives=list(jq.job_extra_directives),
        job_script_prologue=job_prologue(runner),
        python=jq.python or sys.executable,
        interface=jq.interface or None,
        local_directory=jq.local_directory or None,
        log_directory=jq.log_directory or None,
        scheduler_options={"dashboard_address": ":0" if dashboard else None},
    )
    if jq.account:
        kwargs[ACCOUNT_KEYWORD[kind]] = jq.account
    try:
        return cls(**kwargs)
    except (ValueError, TypeError, OSError) as exc:
        raise ClusterError(f"runner.jobqueue for {kind.value}: {exc}") from None


def _jobqueue_class(kind: ClusterKind):
    if kind not in JOBQUEUE_KINDS:
        raise ValueError(f"runner.cluster = {kind.value!r} is not a batch-job cluster")
    try:
        import dask_jobqueue
    except ImportError:
        raise ClusterError(f"runner.cluster = {kind.value!r} needs dask-jobqueue: "
                           f"pip install 'spare_gen[cluster]'") from None
    return getattr(dask_jobqueue, JOBQUEUE_CLASSES[kind])


def submit_command(kind: ClusterKind) -> str:
    """The queue system's submit command (sbatch, qsub, bsub) as dask-jobqueue calls it."""
    return _jobqueue_class(kind).job_cls.submit_command


class _SubmitRefusals(logging.Handler):
    """Collects the queue system's refusals of a job (bad partition, account, limits), which dask-jobqueue only
    logs from its event loop; they become one line instead of a traceback."""

    LOGGERS = ("tornado.application", "distributed.deploy.spec", "distributed.deploy.adaptive")

    def __init__(self, say) -> None:
        super().__init__(logging.ERROR)
        self.say, self.refusals = say, list[str]()
        self.attached_during_run = False  # once the run has started, a refusal is reported and the run goes on
        self._saved: list[tuple[logging.Logger, bool, list[logging.Handler]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        text = str(exc) if exc is not None else record.getMessage()
        if "Command exited with non-zero exit code" not in text:
            return
        stderr = text.partition("stderr:")[2]
        reason = "; ".join(line.strip() for line in stderr.splitlines() if line.strip()) or text.splitlines()[0]
        if reason not in self.refusals:
            self.refusals.append(reason)
            if len(self.refusals) == 1 and self.attached_during_run:
                self.say(f"spare-gen: the queue system refused a job: {reason}")

    def __enter__(self) -> "_SubmitRefusals":
        for name in self.LOGGERS:  # Dask gives some of these loggers their own stream handler: ours only
            logger = logging.getLogger(name)
            self._saved.append((logger, logger.propagate, list(logger.handlers)))
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
            logger.addHandler(self)
            logger.propagate = False
        return self

    def __exit__(self, *exc) -> None:
        for logger, propagate, handlers in self._saved:
            logger.removeHandler(self)
            for handler in handlers:
                logger.addHandler(handler)
            logger.propagate = propagate


def _wait_for_first_worker(first, refusals: _SubmitRefusals, where: str, command: str, wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            first.result(timeout=1)
            return
        except TimeoutError:
            pass
        if refusals.refusals:
            raise ClusterError(f"{where}: {command} refused the job: {refusals.refusals[0]} (see runner.jobqueue)")
        if time.monotonic() > deadline:
            raise ClusterError(f"{where}: no worker started within {wait_s:.0f} s (runner.jobqueue.wait_s); "
                               f"check the queue (e.g. squeue/qstat) and the jobs' log files")


def _close_quietly(cluster) -> None:
    """Cancel the jobs and stop the scheduler; a job the queue system refused has nothing to cancel."""
    try:
        cluster.close()
    except (AssertionError, RuntimeError, OSError, TimeoutError):
        pass


@contextlib.contextmanager
def _open_jobqueue(runner: RunnerConfig, shared: Path | None, dashboard: bool, say) -> Iterator:
    from distributed import Client

    kind, jq = runner.cluster, runner.jobqueue
    command = submit_command(kind)
    if shutil.which(command) is None:  # before any job or work: this is not a login node of that system
        raise ClusterError(f"runner.cluster = {kind.value!r}: the submit command {command!r} is not on PATH; "
                           f"run spare-gen on a login node of the {kind.value.upper()} cluster")
    with _SubmitRefusals(say) as refusals:
        cluster = jobqueue_cluster(runner, dashboard=dashboard and dashboard_available())
        try:
            client = Client(cluster)
            try:
                if jq.jobs:
                    cluster.scale(jobs=jq.jobs)
                    plan = f"{jq.jobs} job(s)"
                else:
                    cluster.adapt(minimum_jobs=jq.adaptive_min, maximum_jobs=jq.adaptive_max)
                    plan = f"adaptive {jq.adaptive_min}-{jq.adaptive_max} job(s)"
                where = f"{kind.value.upper()} cluster"
                say(f"spare-gen: {where}: {plan} of {jq.cores} worker(s) with 1 thread each; waiting for the first "
                    f"worker (up to {jq.wait_s:.0f} s); scheduler {cluster.scheduler_address}")
                # a task, not client.run: an adaptive cluster starts a job for it
                _wait_for_first_worker(client.submit(socket.gethostname, pure=False), refusals, where, command,
                                       jq.wait_s)
                _check_spare_gen(client, where)
                if shared is not None:
                    check_shared_folder(client, shared, where)
                refusals.attached_during_run = True
                yield client
            finally:
                client.close()
        finally:
            _close_quietly(cluster)


@contextlib.contextmanager
def open_cluster(runner: RunnerConfig, shared: Path | None = None, dashboard: bool | None = None,
                 quiet: bool = False, intro: str = "") -> Iterator:
    """Yield a ``distributed.Client`` for runner.cluster: embedded (local), a running scheduler, or batch jobs.

    For every cluster but the embedded one, ``shared`` (the output folder) must be visible to the workers
    at the same path, or ClusterError (one line) before any work. ``intro``: as for ``open_client``.
    """
    dashboard = runner.dashboard if dashboard is None else dashboard
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr))
    if runner.cluster is ClusterKind.LOCAL:
        with open_client("", runner.workers, dashboard, quiet, intro=intro) as client:
            yield client
    elif runner.cluster is ClusterKind.SCHEDULER:
        with open_client(runner.scheduler, 0, dashboard, quiet, shared=shared, intro=intro) as client:
            yield client
    else:
        with _open_jobqueue(runner, shared, dashboard, say) as client:
            if intro:  # once the jobs run: a refused job or a missing sbatch stays one line
                say(intro)
            yield client
