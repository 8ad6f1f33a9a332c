"""A unit's result, typed where it crosses from a stage's task to the runner, the unit file and the stage's tables.

Every stage declares its result as a frozen dataclass on ``Timed`` that holds the stage's row(s) typed (e.g.
``ModelResult.row``, a ``ModelRow``: a result that is one table row is a ``RowResult``) and names it on its settings
(``StageSettings.RESULT``). The runner reads a result only through ``UnitResult``: ``unit_id``, ``status``, ``error``
and ``timings``; ``record()`` is what the unit file stores and the stage's tables read. On the class, ``from_record`` reads a stored record back and
``failure`` makes the stage's result of a unit that made nothing (the machine failed it, or its task raised).
A record has the keys the result's dict had before these types, so finished outputs keep their ``.units`` bytes
and resume.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Mapping, Protocol, Self, TypeVar

from spare_gen.runner.isolation import Status


@dataclass(frozen=True, kw_only=True)
class Timings:
    """How long one unit took, by clock (None: not measured); never part of its record, and written to
    ``timings/<stage>.json`` under these names: the wall seconds of its child call(s), of the whole task on the
    worker, the CPU seconds of its child call(s), and CPU seconds per step as the stage measures them."""

    child_wall_s: float | None = None
    task_wall_s: float | None = None
    child_cpu_s: float | None = None
    steps_cpu_s: Mapping[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}


class UnitResult(Protocol):
    """What the runner reads of any stage's result."""

    @property
    def unit_id(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def error(self) -> str: ...

    @property
    def timings(self) -> Timings: ...

    def record(self) -> dict[str, Any]:
        """What the unit file stores (JSON-able; no timings)."""
        ...

    def timed(self, **clocks: Any) -> Self: ...


R = TypeVar("R", bound=UnitResult)
R_co = TypeVar("R_co", bound=UnitResult, covariant=True)


class ResultType(Protocol[R_co]):
    """A stage's result class, as the runner uses it."""

    def from_record(self, record: Mapping[str, Any]) -> R_co:
        """A stored record read back (``record()``'s inverse)."""
        ...

    def failure(self, unit_id: str, status: Status, error: str) -> R_co:
        """The result of a unit that made nothing: ``status`` (failed, or transient for the machine's fault) and
        why, with the rows its tables need for it."""
        ...


@dataclass(frozen=True, kw_only=True)
class Timed:
    """Base of a stage's result: its timings, and ``timed`` to add one."""

    timings: Timings = Timings()

    def timed(self, **clocks: Any) -> Self:
        """This result with ``clocks`` (``Timings`` fields) set."""
        return dataclasses.replace(self, timings=dataclasses.replace(self.timings, **clocks))


class KeyedRow(Protocol):
    """A table row keyed by its model, with its status and error (``ModelRow``, ``DrawingRow``, ``WireframeRow``)."""

    @property
    def model_id(self) -> str | None: ...

    @property
    def status(self) -> Any: ...

    @property
    def error(self) -> str | None: ...

    def as_dict(self) -> dict: ...


RowT = TypeVar("RowT", bound=KeyedRow)


@dataclass(frozen=True, kw_only=True)
class RowResult(Timed, Generic[RowT]):
    """A result that is one row of its stage's table, a row with ``model_id`` (the unit's id), ``status`` and
    ``error`` columns (``ROW``, declared by the subclass). Its record is the row's columns and ``unit_id``; a unit that
    made nothing is a row with only those three."""

    ROW: ClassVar[type[Any]]
    row: RowT

    @property
    def unit_id(self) -> str:
        return str(self.row.model_id)

    @property
    def status(self) -> str:
        return status_text(self.row.status)

    @property
    def error(self) -> str:
        return self.row.error or ""

    def record(self) -> dict[str, Any]:
        return {**self.row.as_dict(), "unit_id": self.unit_id}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        return cls(row=cls.ROW(**{k: v for k, v in record.items() if k != "unit_id"}))

    @classmethod
    def failure(cls, unit_id: str, status: Status, error: str) -> Self:
        return cls(row=cls.ROW(model_id=unit_id, status=status, error=error))


def is_transient(result: UnitResult) -> bool:
    """True for a machine failure: retried by the runner, never recorded."""
    return result.status == Status.TRANSIENT


def status_text(status: Any) -> str:
    """A row's status as its record holds it (an enum member as its value)."""
    return status.value if isinstance(status, Status) else str(status)
