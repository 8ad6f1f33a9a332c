"""Per-unit progress of jobs that run many units on a worker (a sharded stage's shard): the worker says how many of
its units are done, the client's bar moves by them before the job ends.

The worker logs a Dask event (``Worker.log_event``) and the client hears it (``Client.subscribe_topic``). Events ride
the worker's batched stream to the scheduler, which forwards them to the subscribed client: no connection, actor
or scheduler-side object to create and delete (a ``distributed.Queue`` or ``Variable`` is one, and each put is a
request of its own), nothing waits on them, and a job that runs outside a worker or without a listener sends
nothing. A worker says at most one count per ``EVERY_S`` per job, so a job of quick units (reused ones) costs a few
small messages, and the scheduler keeps only a topic's last events (``distributed.admin.low-level-log-length``,
1,000 by default). What the bar shows never decides an output: the job's result is the same with or without them.
"""

from __future__ import annotations

import threading
import time
from typing import Iterable, Iterator, TypeVar

from spare_gen.runner.stage import new_run_token

T = TypeVar("T")
EVERY_S = 0.5  # a job's count goes to the client at most this often


class UnitCounter:
    """The worker's side: ``unit_done()`` after each unit of job ``job`` (or loop over ``each(units)``); the count
    so far is logged under ``topic`` (None: not logged, the caller has no bar), at most every EVERY_S seconds."""

    def __init__(self, topic: str | None, job: int):
        self.topic, self.job, self.done = topic, job, 0
        self._said = time.monotonic()

    def each(self, units: Iterable[T]) -> Iterator[T]:
        """``units`` one by one, each counted done when the next is asked for (the last one is told by the job's
        end, which the client hears anyway)."""
        for k, unit in enumerate(units):
            if k:
                self.unit_done()
            yield unit

    def unit_done(self) -> None:
        self.done += 1
        if self.topic is None or time.monotonic() - self._said < EVERY_S:
            return
        from distributed import get_worker

        try:
            worker = get_worker()
        except ValueError:  # not on a worker (a job run in the client's process): nobody to tell
            self.topic = None
            return
        self._said = time.monotonic()
        worker.log_event(self.topic, [self.job, self.done])


class UnitTally:
    """The client's side: ``bar`` moves by the units the jobs' ``UnitCounter`` report, each unit of a job once (a
    retried job counts again from zero: only counts above the best heard move the bar), and by the rest of a job's
    units when it ends (``finished``). ``topic`` is None when ``enabled`` is false (nothing is subscribed)."""

    def __init__(self, client, bar, enabled: bool = True):
        self.client, self.bar = client, bar  # bar: None once closed
        self.topic = f"spare-gen-units-{new_run_token()}" if enabled else None
        self._told: dict[int, int] = {}
        self._ended: set[int] = set()
        self._lock = threading.Lock()
        if self.topic is not None:
            client.subscribe_topic(self.topic, self._heard)

    def _heard(self, event: tuple) -> None:
        """An event ``(time, [job, done])``, on the client's event-loop thread."""
        job, done = event[1]
        with self._lock:
            more = done - self._told.get(job, 0)
            if self.bar is None or job in self._ended or more <= 0:
                return
            self._told[job] = done
            self.bar.update(more)

    def finished(self, job: int, units: int) -> None:
        """Job ``job`` of ``units`` units has ended (for good: written, or failed after its retries)."""
        with self._lock:
            self._ended.add(job)
            self.bar.update(max(0, units - self._told.pop(job, 0)))

    def close(self) -> None:
        """Stop listening; an event still on its way is ignored (distributed keeps the handler after
        ``unsubscribe_topic``, so it must not touch the bar any more)."""
        with self._lock:
            self.bar = None
        if self.topic is not None:
            self.client.unsubscribe_topic(self.topic)
            self.topic = None
