"""The stage contract: typed frozen settings, and units run as ``(unit, settings, rng) -> result`` in the child.

A stage is a ``StageSettings`` subclass (built once from the config), a list of units (JSON-able dicts with
a unique ``unit_id``) and a pure function ``(unit, settings, rng)``. Functions that call OpenCASCADE run in
the Dask worker's killable child through ``run_in_child``, named ``"module:function"``: a name, not a
function object, so OCP is imported only in the child, never in the Dask worker. The child derives ``rng``
from (seed, stage, unit_id) (``spare_gen.rng``), so a unit's random choices depend on nothing else.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import dataclass
from typing import Any, ClassVar, NotRequired, TypedDict

from pydantic import BaseModel, ConfigDict

from spare_gen.config.schema import Config, DebugConfig, RunnerConfig
from spare_gen.rng import derive_rng
from spare_gen.runner.isolation import Outcome, worker_executor
from spare_gen.runner.results import ResultType


class Unit(TypedDict):
    """A unit's payload: JSON-able, with a unique ``unit_id``; ``shape_path``, where it reads a shape file, whose
    content its fingerprint covers. Its canonical JSON (with the settings') is its fingerprint and names nothing else,
    so a unit stays a dict at run time: each stage declares its own units as a TypedDict on this one (e.g.
    ``DrawUnit``), which the type checker checks key by key."""

    unit_id: str
    shape_path: NotRequired[str]


@dataclass(frozen=True)
class Summary:
    """What one stage (or step) of a run did: its name and one line for the console and ``dataset.json``."""

    stage: str
    text: str


class RunOptions(BaseModel):
    """How a stage runs, never what it makes (no part of a fingerprint): progress bars, units per table part,
    test hooks. Defaults are the config schema's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    progress: bool = RunnerConfig.model_fields["progress"].default
    shard_units: int = RunnerConfig.model_fields["shard_units"].default
    debug: DebugConfig = DebugConfig()
    label: str = ""  # what the progress line names (default: the stage), e.g. ``questions isometric_to_pose``

    @classmethod
    def from_config(cls, config: Config) -> "RunOptions":
        return cls(progress=config.runner.progress, shard_units=config.runner.shard_units, debug=config.debug)


def fingerprint_of(data: dict) -> str:
    """The fingerprint of a settings record: its canonical JSON (sorted keys, no spaces), hashed."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


class StageSettings(BaseModel):
    """What decides a stage's results, typed and frozen; ``out_dir`` says only where to write.

    ``timeout_s`` is the CPU-time budget of one unit's child call: it can decide a result (a timeout
    row), so it counts in the fingerprint; ``out_dir`` does not. ``RESULT``: the class of the stage's unit results.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    PLACEMENT: ClassVar[frozenset[str]] = frozenset({"out_dir"})
    RESULT: ClassVar[ResultType[Any]]  # the stage's unit result class (``spare_gen.runner.results``)

    stage: str
    seed: int
    out_dir: str
    timeout_s: float

    def fingerprint(self) -> str:
        """Hash of every field but where the output goes."""
        return fingerprint_of(self.model_dump(mode="json", exclude=set(self.PLACEMENT)))

    def unit_rng(self, unit_id: str):
        """The generator of one unit: derived from (seed, stage, unit_id) only."""
        return derive_rng(self.seed, self.stage, unit_id)


def call_unit(target: str, unit: Unit, settings: StageSettings) -> Any:
    """Child side: ``target(unit, settings, rng)``."""
    module, name = target.split(":")
    func = getattr(importlib.import_module(module), name)
    return func(unit, settings, settings.unit_rng(unit["unit_id"]))


def run_in_child(target: str, unit: Unit, settings: StageSettings, *, timeout: float | None = None,
                 phase: str = "") -> Outcome:
    """Worker side: run ``target(unit, settings, rng)`` in the killable child under a CPU-time budget.

    ``timeout`` defaults to ``settings.timeout_s``; ``phase`` names the attempt for test hooks.
    """
    budget = settings.timeout_s if timeout is None else timeout
    return worker_executor().run("spare_gen.runner.contract:call_unit",
                                 {"target": target, "unit": unit, "settings": settings}, budget, phase=phase)
