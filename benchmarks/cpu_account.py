"""CPU seconds by process kind (client with scheduler, Dask nannies, Dask workers, OCCT children) and projections
from CPU rather than from wall clocks, for every benchmark.

On a shared machine a wall clock measures the other jobs as much as spare_gen; CPU seconds per unit do not
depend on the load. Measured with ``resource.getrusage``:

* client: ``RUSAGE_SELF`` of this process (the client and, on an embedded cluster, the scheduler);
* workers: every Dask worker's own ``RUSAGE_SELF`` (asked through ``client.run``, so a remote cluster counts too);
* OCCT children: every worker's ``RUSAGE_CHILDREN`` (children that ended) plus its live children (from /proc);
* nannies: the nanny processes' ``RUSAGE_SELF`` (``client.run(nanny=True)``);
* ended: this process's ``RUSAGE_CHILDREN`` (process pools and clusters that already stopped).

The projection to full scale on N workers assumes the client's work is serial and everything else spreads:
``client CPU / fraction + (workers + nannies + OCCT children) CPU / fraction / N``.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass, field

import psutil

KINDS = ("client", "nanny", "worker", "child", "ended")
LABELS = {"client": "client+scheduler", "nanny": "nannies", "worker": "Dask workers", "child": "OCCT children",
          "ended": "ended processes"}
PROJECT_WORKERS = (2, 8, 16, 64)


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    """Runs on a worker or nanny: CPU seconds of this process."""
    return _cpu(resource.getrusage(resource.RUSAGE_SELF))


def worker_cpu() -> tuple[float, float]:
    """Runs on a worker: (its own CPU seconds, its OCCT children's: ended ones plus live ones)."""
    children = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
    for proc in psutil.Process().children(recursive=True):
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        children += times.user + times.system
    return own_cpu(), children


def cpu_now(client=None) -> dict[str, float]:
    """Cumulative CPU seconds by kind now (KINDS); without a client only this process and its ended children."""
    now = dict.fromkeys(KINDS, 0.0)
    now["client"] = _cpu(resource.getrusage(resource.RUSAGE_SELF))
    now["ended"] = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
    if client is not None:
        for own, children in client.run(worker_cpu).values():
            now["worker"] += own
            now["child"] += children
        try:
            now["nanny"] = sum(client.run(own_cpu, nanny=True).values())
        except (ValueError, KeyError):  # workers started without nannies
            pass
    return now


@dataclass
class StageCost:
    """One measured stretch of work: its units, wall seconds and CPU seconds by kind."""

    name: str
    units: int
    unit: str
    wall: float
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def serial(self) -> float:
        """CPU that does not spread over workers: the client and scheduler."""
        return self.cpu.get("client", 0.0)

    @property
    def parallel(self) -> float:
        return sum(v for k, v in self.cpu.items() if k != "client")

    @property
    def total(self) -> float:
        return self.serial + self.parallel


class CpuMeter:
    """Measures CPU by kind over a stretch of work: ``with meter.stage("models", n, "model"): ...``."""

    def __init__(self, client=None):
        self.client = client
        self.stages: list[StageCost] = []
        self.load_start = os.getloadavg()
        self.load_end = self.load_start

    def measure(self, name: str, units: int, unit: str, work) -> object:
        """Run ``work()`` and record its wall and CPU seconds; returns what ``work`` returns."""
        import time

        before, t0 = cpu_now(self.client), time.perf_counter()
        result = work()
        wall, after = time.perf_counter() - t0, cpu_now(self.client)
        self.stages.append(StageCost(name, units, unit, wall, {k: max(0.0, after[k] - before[k]) for k in KINDS}))
        self.load_end = os.getloadavg()
        return result

    def lines(self, fraction: float = 1.0, workers: int = 0) -> list[str]:
        """Per stage CPU per unit by kind; the client's share; projections to 1/fraction from CPU for
        PROJECT_WORKERS workers beside the wall-clock projection (measured on ``workers``)."""
        out = [f"load average at start {_load(self.load_start)}, at end {_load(self.load_end)} "
               f"({os.cpu_count()} CPUs)"]
        for s in self.stages + ([_total(self.stages)] if len(self.stages) > 1 else []):
            per = "  ".join(f"{LABELS[k]} {1e3 * v / max(1, s.units):.2f}" for k, v in s.cpu.items() if v > 0)
            share = 100 * s.serial / s.total if s.total else 0.0
            out.append(f"  {s.name:24s} {s.units:7d} {s.unit}s  wall {s.wall:8.1f} s  CPU {s.total:8.1f} s "
                       f"(client {share:.1f}%); ms CPU per {s.unit}: {per}")
        for s in self.stages + ([_total(self.stages)] if len(self.stages) > 1 else []):
            proj = "  ".join(f"{n}: {projected(s, fraction, n) / 60:7.1f}" for n in PROJECT_WORKERS)
            wall = f"wall-clock projection {s.wall / fraction / 60:7.1f} min on {workers} workers" if workers else ""
            out.append(f"  {s.name:24s} full scale (x{1 / fraction:g}) from CPU, min on N workers: {proj}   {wall}")
        return out


def projected(stage: StageCost, fraction: float, n_workers: int) -> float:
    """Seconds at 1/fraction scale on ``n_workers`` workers: the serial client CPU plus the rest spread."""
    return (stage.serial + stage.parallel / n_workers) / fraction


def _total(stages: list[StageCost]) -> StageCost:
    cpu = {k: sum(s.cpu.get(k, 0.0) for s in stages) for k in KINDS}
    return StageCost("whole run", stages[0].units, stages[0].unit,
                     sum(s.wall for s in stages), cpu)


def _load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.2f}" for x in load)
