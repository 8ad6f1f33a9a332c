"""Dask clients: an embedded LocalCluster of single-threaded worker processes, or a remote scheduler."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from typing import Iterator

CONNECT_TIMEOUT_S = 15
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
    """A Dask scheduler that cannot be reached or whose workers cannot run spare_gen (one line)."""


def _worker_check() -> str:
    """Runs on every worker: can it import the stage runner (and so spare_gen)?"""
    import spare_gen.runner.stage  # noqa: F401

    return "ok"


def _check_workers(client, scheduler: str) -> None:
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except Exception:
        raise ClusterError(f"Dask scheduler {scheduler}: no worker joined within {WORKER_WAIT_S} s") from None
    try:
        client.run(_worker_check)
    except Exception as exc:
        raise ClusterError(f"Dask scheduler {scheduler}: its workers cannot run spare_gen "
                           f"({type(exc).__name__}: {exc}); install spare_gen on every worker") from None


@contextlib.contextmanager
def _workers_ignore_sigint() -> Iterator[None]:
    """Worker processes started inside inherit an ignored SIGINT: Ctrl-C stops the client, which stops them."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to do
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
                intro: str = "") -> Iterator:
    """Yield a ``distributed.Client``: to ``scheduler`` if given, else to a fresh embedded LocalCluster.

    ``intro`` is printed before the client's own lines, once a scheduler answered (an unreachable one is one line).

    Embedded workers are processes with one thread each (OCCT holds the GIL) and are not daemonic,
    so each can keep its own killable OCCT child process.
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
    with dask.config.set({"distributed.worker.daemon": False, **QUIET_WORKERS}):
        with _workers_ignore_sigint():
            cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # a free port; never the shared default 8787
                scheduler_kwargs=None if dashboard else {"dashboard": False},
                silence_logs=logging.CRITICAL,  # a Ctrl-C or a lost worker is reported once, by spare-gen
            )
        client = Client(cluster)
        link = client.dashboard_link if dashboard else "off"
        say(f"spare-gen: embedded Dask LocalCluster with {n} worker(s), 1 thread each; dashboard {link}")
        try:
            yield client
        finally:
            client.close()
            cluster.close()
