"""Hugging Face tables: each task split with its PNG drawings embedded as ``Image`` features, loadable from anywhere.

``datasets`` opens an image path relative to the current directory, not to the dataset, so the
question tables (paths relative to the dataset root) cannot carry ``Image`` features. These copies,
``hf/<task>/{train,validation,test}.parquet``, hold every ``*_png`` column as the image itself
(``{"bytes", "path": null}``: no file name, which could carry the answer) and keep every other column.
The ``hf`` schema metadata tells ``datasets`` which columns are images.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spare_gen.atomic import write_parquet
from spare_gen.config.schema import TaskName
from spare_gen.store import ownership
from spare_gen.store.packed import IMAGE_TYPE, drawing_bytes
from spare_gen.stages.questions.schema import split_path
from spare_gen.stages.questions.tasks import SPLITS

HF_DIR = "hf"
HF_SPLIT = {"train": "train", "val": "validation", "test": "test"}  # spare_gen split -> Hugging Face split name
PNG_SUFFIX = "_png"


def hf_path(out: Path, task: str, split: str) -> Path:
    """``<out>/hf/<task>/<HF split name>.parquet`` for a spare_gen split name."""
    return Path(out) / HF_DIR / task / f"{HF_SPLIT[split]}.parquet"


def _image(out: Path, rel: str | None) -> dict | None:
    return None if rel is None else {"bytes": drawing_bytes(out, rel), "path": None}


def _feature(typ: pa.DataType, image: bool = False) -> dict:
    """The ``datasets`` feature JSON of an Arrow type (the subset question tables use); PNG paths become Image."""
    if pa.types.is_list(typ) or pa.types.is_fixed_size_list(typ):
        feature = {"feature": _feature(typ.value_type, image), "_type": "List"}
        if pa.types.is_fixed_size_list(typ):
            feature["length"] = typ.list_size
        return feature
    if image:
        return {"_type": "Image"}
    dtype = {pa.string(): "string", pa.large_string(): "large_string", pa.float32(): "float32",
             pa.float64(): "float64", pa.bool_(): "bool"}.get(typ, str(typ))  # int32, uint64, ...
    return {"dtype": dtype, "_type": "Value"}


def hf_features(schema: pa.Schema) -> dict:
    """Feature JSON of a question table: every PNG column an Image (or a list of them)."""
    return {f.name: _feature(f.type, f.name.endswith(PNG_SUFFIX)) for f in schema}


def packed_table(out: Path, table: pa.Table) -> pa.Table:
    """``table`` with every PNG path column replaced by the image bytes (lists of paths by lists of images)."""
    columns, fields = [], []
    for f in table.schema:
        col = table.column(f.name)
        if f.name.endswith(PNG_SUFFIX):
            values = col.to_pylist()
            if pa.types.is_list(f.type):
                typ = pa.list_(IMAGE_TYPE)
                col = pa.array([None if v is None else [_image(out, p) for p in v] for v in values], typ)
            else:
                typ = IMAGE_TYPE
                col = pa.array([_image(out, v) for v in values], typ)
            f = pa.field(f.name, typ, metadata=f.metadata)
        columns.append(col)
        fields.append(f)
    schema = pa.schema(fields)
    meta = {b"huggingface": json.dumps({"info": {"features": hf_features(table.schema)}}).encode()}
    return pa.Table.from_arrays(columns, schema=schema.with_metadata(meta))


def write_hf_split(out: Path, task: str, split: str) -> bool:
    """Write the packed copy of one task split (runs on a Dask worker as well); False for a missing or empty
    split (``write_hf_tables`` then removes a stale copy spare_gen wrote)."""
    src, dest = split_path(out, task, split), hf_path(out, task, split)
    if not src.is_file() or pq.read_metadata(src).num_rows == 0:
        return False
    write_parquet(dest, packed_table(out, pq.read_table(src)))
    return True


def write_hf_tables(out: Path, tasks: list[str], client=None) -> dict[str, list[str]]:
    """Write the packed copy of every non-empty task split, one Dask task each if a ``client`` is given;
    {task: [spare_gen split names written]}."""
    out = Path(out)
    pairs = [(task, split) for task in tasks for split in SPLITS]
    if client is not None:
        where = out.resolve()  # as the workers see it
        done = client.gather([client.submit(write_hf_split, where, t, s, pure=False) for t, s in pairs])
    else:
        done = [write_hf_split(out, t, s) for t, s in pairs]
    written: dict[str, list[str]] = {}
    stale = [hf_path(out, t.value, s).relative_to(out).as_posix() for t in TaskName for s in SPLITS
             if t.value not in tasks]
    for (task, split), wrote in zip(pairs, done):
        if wrote:
            written.setdefault(task, []).append(split)
        else:
            stale.append(hf_path(out, task, split).relative_to(out).as_posix())
    ownership.remove(out, stale)  # copies of splits now empty and of tasks no longer asked for: only spare_gen's own
    return written

