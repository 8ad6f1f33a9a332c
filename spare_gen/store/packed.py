"""Drawings packed into the views table (``render.store = "parquet"``), and the one way to read any drawing.

With ``render.store = "files"`` (the default) the drawings stage writes ``drawings/<model_id>/<view>.svg|png``.
With ``"parquet"`` it writes no drawing file: each row of ``views.parquet`` holds the PNG as a Hugging Face
``Image`` struct (``png_image``: ``{bytes, path}``, path = the drawing's logical path) and the SVG document as
text (``svg_text``), while ``svg`` and ``png`` keep the logical paths, so every table names a drawing the same
way in both modes. The parts' schema metadata declares ``png_image`` an ``Image`` for ``datasets``.

``drawing_bytes(out, rel)`` is how every consumer opens a drawing by path: the packed bytes when a views row
holds them, else the file. The index (path -> part, column, row) is built once per dataset folder from the
path columns alone and rebuilt when the views folder changes; the bytes are read one part and column at a
time, and only a few parts are kept in memory.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.store import shards

VIEWS_TABLE = "views.parquet"
PNG_IMAGE = "png_image"
SVG_TEXT = "svg_text"
PACKED_COLUMNS = {"png": PNG_IMAGE, "svg": SVG_TEXT}  # path column -> column holding its bytes
IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])  # Hugging Face ``Image`` storage
PACKED_FIELDS = (pa.field(PNG_IMAGE, IMAGE_TYPE), pa.field(SVG_TEXT, pa.string()))
HF_METADATA = {b"huggingface": json.dumps({"info": {"features": {PNG_IMAGE: {"_type": "Image"}}}}).encode()}
CACHED_PARTS = 8  # (part, column) arrays kept in memory per dataset folder


def packed_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` (the views schema) plus the packed columns, with the ``datasets`` feature metadata."""
    return pa.schema(list(schema) + list(PACKED_FIELDS), metadata={**(schema.metadata or {}), **HF_METADATA})


def packed_row(row: dict, svg: bytes, png: bytes | None) -> dict:
    """The packed columns of one views row (its ``svg``/``png`` logical paths already set)."""
    return {SVG_TEXT: svg.decode("utf-8"),
            PNG_IMAGE: None if png is None else {"bytes": png, "path": row.get("png")}}


def is_packed(row: dict, key: str) -> bool:
    """True if ``key`` of the dict ``row`` is a packed column, or a file column whose bytes the row holds itself
    (so it names no file)."""
    if key in PACKED_COLUMNS.values():
        return True
    column = PACKED_COLUMNS.get(key)
    return column is not None and row.get(column) is not None


class _Store:
    """One dataset folder's packed drawings: where each is, and a few parts' bytes."""

    def __init__(self, stamp):
        self.stamp = stamp
        self.where: dict[str, tuple[Path, str, int]] = {}
        self.parts: OrderedDict[tuple[Path, str], pa.Array] = OrderedDict()

    def load_index(self, folder: Path) -> None:
        for part in shards.parts(folder):
            names = pq.read_schema(part).names
            columns = [c for c, packed in PACKED_COLUMNS.items() if c in names and packed in names]
            if not columns:
                continue
            table = pq.read_table(part, columns=columns)
            for column in columns:
                for i, rel in enumerate(table.column(column).to_pylist()):
                    if rel:
                        self.where[rel] = (part, PACKED_COLUMNS[column], i)

    def column(self, part: Path, column: str) -> pa.Array:
        key = (part, column)
        if key in self.parts:
            self.parts.move_to_end(key)
            return self.parts[key]
        values = pq.read_table(part, columns=[column]).column(column).combine_chunks()
        if column == PNG_IMAGE:
            values = values.field("bytes")
        self.parts[key] = values
        while len(self.parts) > CACHED_PARTS:
            self.parts.popitem(last=False)
        return values


_stores: dict[Path, _Store] = {}
_lock = threading.Lock()


def _stamp(folder: Path):
    try:
        st = folder.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ino)


def _store(out: str | Path) -> _Store | None:
    folder = Path(out).resolve() / VIEWS_TABLE
    stamp = _stamp(folder)
    if stamp is None:
        return None
    store = _stores.get(folder)
    if store is None or store.stamp != stamp:
        store = _Store(stamp)
        if folder.is_dir():
            store.load_index(folder)
        _stores[folder] = store
    return store


def packed_paths(out: str | Path) -> set[str]:
    """Every drawing path whose bytes the views table holds (empty for ``render.store = "files"``)."""
    with _lock:
        store = _store(out)
        return set(store.where) if store else set()


def packed_bytes(out: str | Path, rel: str) -> bytes | None:
    """The bytes the views table holds for ``rel``, or None if it holds none."""
    with _lock:
        store = _store(out)
        if store is None or rel not in store.where:
            return None
        part, column, row = store.where[rel]
        value = store.column(part, column)[row].as_py()
    if value is None:
        return None
    return value.encode("utf-8") if isinstance(value, str) else value


def drawing_bytes(out: str | Path, rel: str) -> bytes:
    """The bytes of the drawing (or any dataset file) at ``rel``, relative to ``out``: packed in the views table,
    else the file. Raises FileNotFoundError if neither holds it."""
    data = packed_bytes(out, rel)
    if data is not None:
        return data
    return (Path(out) / rel).read_bytes()


def drawing_exists(out: str | Path, rel: str) -> bool:
    """True if ``rel`` is packed in the views table or a file under ``out``."""
    with _lock:
        store = _store(out)
        if store is not None and rel in store.where:
            return True
    return (Path(out) / rel).is_file()
