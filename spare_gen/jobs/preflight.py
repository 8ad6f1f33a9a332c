"""Everything a run's config names, checked before any work, in the one pass ``spare-gen config`` runs too.

So ``config`` refuses what ``run`` refuses, and a refusal (one line, exit 2) writes nothing into the output folder:

- ``out`` is a plain path (``store.preflight.check_output_path``: not empty, not the root, no control character, no
  undecodable byte);
- the inputs exist and can be listed (a files source's folder or list file), and every count is one they can meet:
  the question counts (``check_counts``) and the pool's ``pool.models``;
- the predictions folder a pool reads exists;
- every ``*.parquet`` already in the output folder that spare_gen would read (``inventory.tables``) is a readable
  Parquet file, or it is named;
- a rerun of some stages (``--stages``) that would change what a later stage already in the folder was made from
  names the stages to add, so the dataset never holds a stage made from other models or drawings than its neighbours.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pyarrow.parquet as pq

from spare_gen.config import ConfigError
from spare_gen.config.schema import Config, ModelSource
from spare_gen.stage_table import DECIDE_EVERY_STAGE, MODELS, POOL, QUESTIONS, STAGES, wanted
from spare_gen.stages.models.driver import models_unchanged
from spare_gen.stages.questions.assembly.plan import check_counts, most_models
from spare_gen.store.inventory import tables
from spare_gen.store.manifest import dataset_config, read_manifest
from spare_gen.store.preflight import UnusableOutput, check_output_path


def run_names(config: Config, stages: tuple[str, ...]) -> tuple[str, ...]:
    """The requested stages the config enables (what a run runs, with the steps that follow them)."""
    return tuple(s.name for s in wanted(config, stages) if not s.follows)


def preflight(config: Config, stages: tuple[str, ...]) -> None:
    """Raise (ConfigError, UnusableOutput or FileNotFoundError: one line, exit 2) for anything a run of ``stages``
    with ``config`` would stop on or leave inconsistent; read only, nothing written."""
    check_output_path(config.out)
    out = Path(config.out)
    names = run_names(config, stages)
    check_inputs(config, names)
    if POOL.name in names and config.pool.predictions and not Path(config.pool.predictions).is_dir():
        raise FileNotFoundError(f"pool.predictions: folder {config.pool.predictions!r} does not exist")
    if out.is_dir():
        check_tables_readable(out)
        check_partial_rerun(config, out, names)


def check_inputs(config: Config, names: tuple[str, ...]) -> None:
    """The inputs exist and can be listed (a files source: listing its folder or list file raises one line), and
    the question counts and ``pool.models`` are ones they can meet."""
    asks_pool = POOL.name in names and config.pool.models > 0
    lists = config.models.source is ModelSource.FILES and MODELS.name in names
    if not (lists or asks_pool or QUESTIONS.name in names):
        return
    most, source = most_models(config)
    if QUESTIONS.name in names:  # counts no run could meet
        check_counts(config, (most, source))
    if asks_pool and config.pool.models > most:
        raise ConfigError(f"config error: pool.models = {config.pool.models} cannot be met: the inputs give at most "
                          f"{most} models ({source}); lower it (0 = every usable model) or give more models")


def check_tables_readable(out: Path) -> None:
    """Every Parquet file of ``out`` that spare_gen reads as a table is a regular file whose Parquet footer reads;
    else UnusableOutput naming it (a text file named ``notes.parquet``, a FIFO: never opened)."""
    for rel in tables(out):
        path = out / rel
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise UnusableOutput(f"output folder {out}: {rel} cannot be read ({exc.strerror or exc})") from None
        if not stat.S_ISREG(mode):
            raise UnusableOutput(f"output folder {out}: {rel} is not a regular file; spare_gen reads every *.parquet "
                                 "file in its output folder as a table: move or rename it")
        try:
            pq.read_metadata(path)
        except Exception as exc:  # pyarrow raises ArrowInvalid, OSError...: the file is no table either way
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise UnusableOutput(f"output folder {out}: {rel} is not a readable Parquet file ({reason}); spare_gen "
                                 "reads every *.parquet file in its output folder as a table: move or rename it") \
                from None


def _at(data: dict, key: str) -> object:
    """The value at a dotted key of a config record (None where it has none)."""
    value: object = data
    for part in key.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def changed_stages(config: Config, out: Path, names: tuple[str, ...], record: dict) -> list[str]:
    """The stages of ``names`` whose output a run would change: a config section that decides it differs from the
    one the dataset records, or (a files source) the files differ from the ones its models were made from."""
    recorded, current = record.get("config", {}), dataset_config(config)
    changed = []
    for stage in wanted(config, names):
        if stage.follows:
            continue
        keys = DECIDE_EVERY_STAGE + stage.decided_by
        if any(_at(current, k) != _at(recorded, k) for k in keys):
            changed.append(stage.name)
        elif stage is MODELS and config.models.source is ModelSource.FILES and not models_unchanged(config, out):
            changed.append(stage.name)
    return changed


def check_partial_rerun(config: Config, out: Path, names: tuple[str, ...]) -> None:
    """Refuse a run of some stages that would change what a later stage already in ``out`` (and not in ``names``)
    was made from, naming the stages to add: run as asked, the dataset would pair new models with old drawings (or
    new drawings with old questions), which ``spare-gen validate`` rejects."""
    record = read_manifest(out)
    made = set(record.get("stages", {}))
    enabled = [s for s in STAGES if not s.follows and s.enabled(config)]
    if not made or all(s.name in names for s in enabled):
        return
    changed = changed_stages(config, out, names, record)
    if not changed:
        return
    remade, stale = set(changed), []
    for stage in enabled:  # in run order: a stage made from a remade one is remade too (drawings, then questions)
        if stage.name not in remade and any(n in remade for n in stage.needs) and stage.name in made:
            remade.add(stage.name)
            if stage.name not in names:
                stale.append(stage.name)
    if stale:
        add = ",".join(s.name for s in enabled if s.name in names or s.name in stale)
        raise ConfigError(
            f"--stages {','.join(names)}: this run changes {', '.join(changed)}, which {', '.join(stale)} in {out} "
            f"{'was' if len(stale) == 1 else 'were'} made from; rerun {'it' if len(stale) == 1 else 'them'} too: "
            f"--stages {add}")
