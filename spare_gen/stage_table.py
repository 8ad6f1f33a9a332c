"""The pipeline's stages, declared once, in the order they run: the one place a stage is named.

Each entry is plain data:

- ``name``: what ``spare-gen run --stages`` takes, and the key of the stage's line in ``dataset.json``;
- ``folder``: the folder under the output that the stage writes (``""``: none of its own). It is managed: a file
  spare_gen wrote there that no table names any more is stale and removed after a run
  (``spare_gen.store.inventory.MANAGED_DIRS``);
- ``help``: what it makes, in a few words (``spare-gen run --help``);
- ``runs``: where its implementation lives, ``"module:function"`` with ``function(client, config, out, names) ->
  Summary`` (``names``: the stages this run was asked for), imported only when the stage runs;
- ``enabled_by``: the config switches (dotted fields) that must all be true for the stage to run;
- ``follows``: a step run whenever that stage runs, not named on its own in ``--stages`` (the bias audit follows
  the questions);
- ``needs``: the stages whose outputs it is made from (a rerun that changes those must remake it too);
- ``decided_by``: the config sections (dotted keys of ``dataset.json``'s config) that decide its output, besides
  the ones that decide every stage's (``DECIDE_EVERY_STAGE``).

Adding a stage is one entry here and its implementation. This module imports nothing of spare_gen's and nothing
heavy, so the command line's help and the dataset plumbing read it without loading a driver.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    name: str
    help: str
    runs: str
    folder: str = ""
    enabled_by: tuple[str, ...] = ()
    follows: str = ""
    needs: tuple[str, ...] = ()
    decided_by: tuple[str, ...] = ()

    def enabled(self, config) -> bool:
        """Whether ``config`` (a ``spare_gen.config.schema.Config``) switches this stage on."""
        return all(_setting(config, field) for field in self.enabled_by)

    def run(self, client, config, out, names: tuple[str, ...]):
        """Run the stage's implementation (imported now) and return its ``Summary``."""
        module, _, function = self.runs.partition(":")
        return getattr(importlib.import_module(module), function)(client, config, out, names)


def _setting(config, field: str):
    value = config
    for part in field.split("."):
        value = getattr(value, part)
    return value


MODELS = Stage("models", "CSG or imported CAD models", "spare_gen.jobs.stages:run_models", folder="models",
               decided_by=("models",))
DRAWINGS = Stage("drawings", "three-view and isometric drawings", "spare_gen.jobs.stages:run_drawings",
                 folder="drawings", enabled_by=("render.enabled",), needs=("models",), decided_by=("render",))
QUESTIONS = Stage("questions", "every task's question sets", "spare_gen.jobs.stages:run_questions",
                  folder="questions", enabled_by=("render.enabled", "questions.enabled"), needs=("models", "drawings"),
                  decided_by=("render", "questions"))
AUDIT = Stage("audit", "the bias audit of the questions", "spare_gen.jobs.stages:run_audit",
              enabled_by=QUESTIONS.enabled_by, follows=QUESTIONS.name)
POOL = Stage("pool", "the corrupted-wireframe pool", "spare_gen.jobs.stages:run_pool", folder="pool",
             enabled_by=("pool.enabled",), needs=("models",), decided_by=("pool",))
# config sections that decide every stage's output: the seed, the runner's budgets, test hooks
DECIDE_EVERY_STAGE = ("seed", "runner", "debug")

STAGES = (MODELS, DRAWINGS, QUESTIONS, AUDIT, POOL)
STAGE_NAMES = tuple(s.name for s in STAGES if not s.follows)  # what --stages accepts
POOL_STAGES = (MODELS.name, POOL.name)  # `spare-gen pool`: the pool and the models it is made of
STAGE_FOLDERS = tuple(s.folder for s in STAGES if s.folder)


def stages_help() -> str:
    """The help of ``--stages``: each stage and what it makes."""
    listed = ", ".join(f"{s.name} ({s.help})" for s in STAGES if not s.follows)
    return f"comma-separated subset of the stages, which run in this order (default: all of them): {listed}"


def wanted(config, names: tuple[str, ...]) -> tuple[Stage, ...]:
    """The stages (and the steps that follow them) among ``names`` that ``config`` enables, in run order."""
    return tuple(s for s in STAGES if (s.follows or s.name) in names and s.enabled(config))


def pool_models_only(config, names: tuple[str, ...]) -> int:
    """The models a run needs when it makes a pool and nothing that needs every model (no drawings): pool.models
    (0 = every model, as when drawings are made)."""
    runs = {s.name for s in wanted(config, names)}
    return config.pool.models if POOL.name in runs and DRAWINGS.name not in runs else 0
