"""Typed rows: a stage's row is a frozen dataclass whose fields carry their Arrow type, and the stage's Parquet
schema is generated from it, so a row and its table are declared once (in the stage's ``schema`` module).

A row is declared as a class, so type checkers see its fields::

    @dataclass(frozen=True, kw_only=True)
    class ModelRow(Row):
        model_id: str | None = column(pa.string())

``column(arrow_type, doc)`` declares a field; ``arrow_schema(ModelRow)`` is its schema, field order as declared.
Where a registry names some columns (the pool's metric columns), ``extend_row(name, base, columns)`` appends
``(name, python type, column)`` triples to a declared base row. ``Row.as_dict`` is the plain dict the table
writers take (enum members as their values); ``rows_from_table(ModelRow, table)`` reads a table back as rows.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any, TypeVar

import pyarrow as pa

ARROW, DOC, ANSWER_KEY = "arrow", "doc", "answer_key"


def column(arrow: pa.DataType, doc: str = "", answer_key: bool = False) -> Any:
    """A row field of Arrow type ``arrow`` (null unless given); ``doc`` becomes the Parquet field's description
    where the table publishes descriptions (``arrow_schema(..., described=True)``). ``answer_key``: the column
    holds the answer mapping on purpose (not for model input; the audit's probes leave it out). It is the row
    class's knowledge only: the Parquet schema does not carry it."""
    return dataclasses.field(default=None, metadata={ARROW: arrow, DOC: doc, ANSWER_KEY: answer_key})


def answer_key_fields(row: type) -> tuple[str, ...]:
    """The columns ``row`` declares with ``answer_key=True``, in order."""
    return tuple(f.name for f in dataclasses.fields(row) if f.metadata.get(ANSWER_KEY))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Row:
    """Base of the typed rows: ``as_dict`` for the table writers (``spare_gen.store.shards.rows_to_table``)."""

    def as_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _plain(value):
    return value.value if isinstance(value, Enum) else value


def escaped_text(value: Any) -> Any:
    """``value`` as a table or JSON file can store it: text that is UTF-8 (every ordinary name) unchanged; in text
    that is not, each undecodable byte of a file name (the surrogate ``os.fsdecode`` gives it) written ``\\xNN`` and
    any other lone surrogate ``\\uNNNN``, so a file named with the bytes ``caf\\xe9.step`` reads ``caf\\xe9.step``.
    Lists, tuples and dicts are escaped item by item; other values are returned as they are."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "".join(_escaped_char(c) for c in value)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(escaped_text(v) for v in value)
    if isinstance(value, dict):
        return {escaped_text(k): escaped_text(v) for k, v in value.items()}
    return value


def _escaped_char(c: str) -> str:
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if 0xD800 <= code <= 0xDFFF else c


Columns = list[tuple[str, Any, Any]]  # (name, python type, column(...))
R = TypeVar("R", bound=Row)


def extend_row(name: str, base: type[R], columns: Columns, doc: str = "") -> type[R]:
    """A frozen row class: ``base``'s columns, then these (named by a registry), every one defaulting to null."""
    cls = dataclasses.make_dataclass(name, columns, bases=(base,), frozen=True, kw_only=True)
    cls.__doc__ = doc or base.__doc__
    cls.__module__ = base.__module__
    return cls


def rows_from_table(row: type[R], table: pa.Table) -> list[R]:
    """The rows of ``table`` as ``row`` instances (the table's columns must be fields of ``row``: a column the
    row does not declare is a TypeError); columns the table lacks are null."""
    return [row(**record) for record in table.to_pylist()]


def arrow_fields(row: type, described: bool = False) -> list[pa.Field]:
    return [pa.field(f.name, f.metadata[ARROW], metadata={"description": f.metadata[DOC]} if described else None)
            for f in dataclasses.fields(row)]


def arrow_schema(row: type, described: bool = False) -> pa.Schema:
    """The Parquet schema of a row type: one field per column, in order (with descriptions if ``described``)."""
    return pa.schema(arrow_fields(row, described))
