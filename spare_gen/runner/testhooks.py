"""Test hooks: make a named unit hang, crash, lose its process, hit a full disk, get a broken HLR result or a
boolean that runs over its budget.

Configured in ``[debug]`` with entries ``<unit_id>``, ``<stage>:<unit_id>`` or ``<stage>-<phase>:<unit_id>``
(e.g. ``drawings-exact:csg_000003``: only the exact-HLR attempt). The stage runner sets the unit's context
in the worker (``unit_context``); every child call of that unit carries it (``call_context``) and the child
fires the hooks once before the call (``fire``). Machine-fault hooks (``sigkill``, ``enospc``) fire on the
first ``transient_attempts`` attempts of a unit only, so a retry can succeed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from typing import Iterator

from spare_gen.config.schema import DebugConfig

FINAL_HOOKS = ("hang", "crash")  # the geometry's fault: a timeout, a crash
MACHINE_HOOKS = ("sigkill", "enospc")  # the machine's fault: retried
# checked by the stage code itself through ``active``: ``broken_hlr`` plants a far-away point in exact HLR results,
# ``missing_hlr_line`` cuts the far end off them (drawings); ``slow_boolean`` makes a cut set's first boolean burn
# CPU until its per-step budget (questions.cut_budget_s) stops it (questions: three_view_to_isometric).
FLAG_HOOKS = ("broken_hlr", "missing_hlr_line", "slow_boolean")

_UNIT: dict | None = None  # worker side: {stage, unit_id, attempt, debug}
_ACTIVE: frozenset[str] = frozenset()  # child side: hook names matched by the call in progress


@contextlib.contextmanager
def unit_context(stage: str, unit_id: str, attempt: int, debug: DebugConfig | None) -> Iterator[None]:
    """Worker side: calls made inside carry this unit's hooks (``debug``: the config's ``[debug]`` section)."""
    global _UNIT
    hooks = debug.model_dump(mode="json") if debug is not None else {}
    previous, _UNIT = _UNIT, {"stage": stage, "unit_id": unit_id, "attempt": attempt, "debug": hooks}
    try:
        yield
    finally:
        _UNIT = previous


def _keys(stage: str, unit_id: str, phase: str) -> set[str]:
    keys = {unit_id, f"{stage}:{unit_id}"}
    if phase:
        keys.add(f"{stage}-{phase}:{unit_id}")
    return keys


def call_context(phase: str = "") -> dict | None:
    """Worker side: the hook names that apply to the next child call of the current unit (None: none)."""
    if not _UNIT or not _UNIT["debug"]:
        return None
    debug, keys = _UNIT["debug"], _keys(_UNIT["stage"], _UNIT["unit_id"], phase)
    names = [name for name in FINAL_HOOKS + FLAG_HOOKS if keys & set(debug.get(name) or ())]
    if _UNIT["attempt"] < int(debug.get("transient_attempts", 1)):
        names += [name for name in MACHINE_HOOKS if keys & set(debug.get(name) or ())]
    return {"names": names} if names else None


def fire(context: dict | None) -> None:
    """Child side, before the call: hang (burning CPU, like a runaway OCCT call), abort, die, or fail a write."""
    global _ACTIVE
    names = frozenset((context or {}).get("names", ()))
    _ACTIVE = names
    if "crash" in names:
        os.abort()
    if "sigkill" in names:
        os.kill(os.getpid(), signal.SIGKILL)
    if "enospc" in names:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "(test hook)")
    if "hang" in names:
        while True:
            pass


def active(name: str) -> bool:
    """Child side: is flag hook ``name`` set for the call in progress?"""
    return name in _ACTIVE
