"""CPU seconds by process kind (client with scheduler, Dask nannies, Dask workers, OCCT children) and projections
from CPU rather than from wall clocks, for every benchmark.

On a shared machine a wall clock measures the other jobs as much as spare_gen; CPU seconds per unit do not
depend on the load. Measured with ``resource.getrusage``:

* client: ``RUSAGE_SELF`` of this process (the client and, on an embedded cluster, the scheduler);
* scheduler: a separate scheduler process's ``RUSAGE_SELF`` (``client.run_on_scheduler``);
* workers: every Dask worker's own ``RUSAGE_SELF`` (asked through ``client.run``, so a remote cluster counts too);
* OCCT children: every worker's ``RUSAGE_CHILDREN`` (children that ended) plus its live children (from /proc);
* nannies: the nanny processes' ``RUSAGE_SELF`` (``client.run(nanny=True)``; an embedded cluster's nannies run in
  this process and count as client);
* ended: this process's ``RUSAGE_CHILDREN`` (process pools and clusters that already stopped).

The projection to full scale (``full_units`` of a stage, e.g. the paper config's 12,000 models) on N workers assumes
the client's work is serial and everything else spreads: with ``scale = full_units / units``,
``client CPU x scale + (workers + nannies + OCCT children) CPU x scale / N``.
"""

from __future__ import annotations

import os
import resource
import sys
from dataclasses import dataclass, field

import cloudpickle
import psutil

KINDS = ("client", "scheduler", "nanny", "worker", "child", "ended")
SERIAL = ("client", "scheduler")  # the work that does not spread over workers
LABELS = {"client": "client", "scheduler": "separate scheduler", "nanny": "nannies", "worker": "Dask workers", "child": "OCCT children",
          "ended": "ended processes"}
PROJECT_WORKERS = (2, 8, 16, 64)
# the functions below run on workers that may not have benchmarks/ on their path: send them by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    """Runs on a worker or nanny: CPU seconds of this process."""
    return _cpu(resource.getrusage(resource.RUSAGE_SELF))


def pid_cpu() -> tuple[int, float]:
    """Runs in the scheduler's or a nanny's process: (its pid, its CPU seconds)."""
    return os.getpid(), own_cpu()


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
        pid, cpu = client.run_on_scheduler(pid_cpu)
        if pid != os.getpid():  # an embedded scheduler is part of "client"
            now["scheduler"] = cpu
        for own, children in client.run(worker_cpu).values():
            now["worker"] += own
            now["child"] += children
        try:  # an embedded cluster's nannies live in this process: already counted as "client"
            nannies = dict(client.run(pid_cpu, nanny=True).values())
        except (ValueError, KeyError):  # workers started without nannies
            nannies = {}
        now["nanny"] = sum(cpu for pid, cpu in nannies.items() if pid != os.getpid())
    return now


@dataclass
class StageCost:
    """One measured stretch of work: its units, wall seconds and CPU seconds by kind."""

    name: str
    units: int
    unit: str
    wall: float
    cpu: dict[str, float] = field(default_factory=dict)
    full_units: int = 0  # units at full scale (0: as measured)

    @property
    def scale(self) -> float:
        return (self.full_units or self.units) / max(1, self.units)

    @property
    def serial(self) -> float:
        """CPU that does not spread over workers: the client and scheduler."""
        return sum(self.cpu.get(k, 0.0) for k in SERIAL)

    @property
    def parallel(self) -> float:
        return sum(v for k, v in self.cpu.items() if k not in SERIAL)

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

    def measure(self, name: str, units: int, unit: str, work, full_units: int = 0) -> object:
        """Run ``work()`` and record its wall and CPU seconds; returns what ``work`` returns. ``full_units``: the
        stage's units at full scale, for the projections."""
        import time

        before, t0 = cpu_now(self.client), time.perf_counter()
        result = work()
        wall, after = time.perf_counter() - t0, cpu_now(self.client)
        self.stages.append(StageCost(name, units, unit, wall, {k: max(0.0, after[k] - before[k]) for k in KINDS},
                                     full_units))
        self.load_end = os.getloadavg()
        return result

    def lines(self, workers: int = 0) -> list[str]:
        """Per stage CPU per unit by kind; the client's share; projections to full scale from CPU for
        PROJECT_WORKERS workers beside the wall-clock projection (measured on ``workers``)."""
        out = [f"load average at start {_load(self.load_start)}, at end {_load(self.load_end)} "
               f"({os.cpu_count()} CPUs)"]
        for s in self.stages + ([_total(self.stages)] if len(self.stages) > 1 else []):
            per = "  ".join(f"{LABELS[k]} {1e3 * v / max(1, s.units):.2f}" for k, v in s.cpu.items() if v > 0)
            share = 100 * s.serial / s.total if s.total else 0.0
            out.append(f"  {s.name:24s} {s.units:7d} {s.unit}s  wall {s.wall:8.1f} s  CPU {s.total:8.1f} s "
                       f"(client+scheduler {share:.1f}%); ms CPU per {s.unit}: {per}")
        for s in self.stages + ([_total(self.stages)] if len(self.stages) > 1 else []):
            proj = "  ".join(f"{n}: {projected(s, n) / 60:7.1f}" for n in PROJECT_WORKERS)
            wall = f"wall-clock projection {s.wall * s.scale / 60:7.1f} min on {workers} workers" if workers else ""
            out.append(f"  {s.name:24s} x{s.scale:.4g} from CPU, min on N workers: {proj}   {wall}")
        return out


def projected(stage: StageCost, n_workers: int) -> float:
    """Seconds at full scale on ``n_workers`` workers: the serial client CPU plus the rest spread over them."""
    return (stage.serial + stage.parallel / n_workers) * stage.scale


def _total(stages: list[StageCost]) -> StageCost:
    # each stage scaled to its own full size, expressed per unit of the first stage
    scaled = {k: sum(s.cpu.get(k, 0.0) * s.scale for s in stages) / stages[0].scale for k in KINDS}
    return StageCost("whole run", stages[0].units, stages[0].unit, sum(s.wall * s.scale for s in stages)
                     / stages[0].scale, scaled, stages[0].full_units)


def _load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.2f}" for x in load)
