"""The portable feed cache: one split's decoded uint8 images and everything a trainer reads, in one xz file.

``spare-gen cache OUT --task T --export FILE`` writes it and the training feed (``spare_gen.data.feed``) loads it from
any path, with no PNG and no dataset folder: it is how a split travels to a machine that has neither (a lent GPU).
Needs only numpy and Python's ``lzma``; no torch.

The whole file is one valid ``.xz`` file (``xz -dc FILE | head -c 4000`` shows what it holds), made of xz streams:

* stream 0: ``MAGIC``, the header's length (8 bytes, little-endian), the header (UTF-8 JSON), then the arrays the
  header's ``arrays`` list names (raw, C order, in that order);
* streams 1..n: the images, (images, 3, H, W) uint8 in RGB, question after question, in chunks of whole questions
  (about ``CHUNK_BYTES`` raw each; the header's ``chunks`` gives each one's image count and compressed length), so a
  reader decodes them in parallel threads (``lzma`` releases the GIL while it works).

The header names the task, split, SHA-256 of the split's question table, image shape, channel order, view order and
the order of a question's images (``item_order``), the question ids, the number of choices, and the dataset it came
from (its name, folder, seed, provenance hash, the config it was made with). Each xz stream carries its CRC-64, so a
damaged file is an error, never wrong pixels.
"""

from __future__ import annotations

import json
import lzma
import os
import struct
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from spare_gen.atomic import with_tmp_path
from spare_gen.data.cacheformat import CHUNK_BYTES, FORMAT_VERSION, MAGIC, SUFFIX, XZ_PRESET  # noqa: F401

_LENGTH = struct.Struct("<Q")


def _threads(threads: int | None) -> int:
    return max(1, threads or os.cpu_count() or 1)


@dataclass(frozen=True)
class CacheFile:
    """What a portable cache file holds: its header, its named arrays and the (images, 3, H, W) uint8 RGB images."""

    header: dict
    arrays: dict[str, np.ndarray]
    images: np.ndarray


def write_cache_file(path: str | os.PathLike, header: dict, arrays: dict[str, np.ndarray],
                     chunks: Iterable[np.ndarray], *, preset: int = XZ_PRESET, threads: int | None = None) -> Path:
    """Write ``header`` (JSON-able), ``arrays`` and the image ``chunks`` ((n, 3, H, W) uint8 each) as one file,
    atomically; chunks are compressed ``threads`` at a time (default: one per core)."""
    if not 0 <= preset <= 9:
        raise ValueError(f"xz preset {preset}: choose 0..9")
    arrays = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    compressed: list[tuple[int, bytes]] = []
    with ThreadPoolExecutor(_threads(threads)) as pool:
        pending = []
        for chunk in chunks:
            pending.append(pool.submit(lambda c: (len(c), lzma.compress(np.ascontiguousarray(c).data, preset=preset)),
                                       chunk))
            if len(pending) > 2 * pool._max_workers:  # noqa: SLF001 (bounded memory: few raw chunks at once)
                compressed.append(pending.pop(0).result())
        compressed += [f.result() for f in pending]
    header = {**header, "format": MAGIC.decode().strip(), "format_version": FORMAT_VERSION,
              "arrays": [{"name": n, "dtype": a.dtype.str, "shape": list(a.shape)} for n, a in arrays.items()],
              "chunks": [{"images": n, "xz_bytes": len(data)} for n, data in compressed]}
    text = json.dumps(header, sort_keys=True).encode()
    head = lzma.compress(MAGIC + _LENGTH.pack(len(text)) + text + b"".join(a.data for a in arrays.values()),
                         preset=preset)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            fh.write(head)
            for _, data in compressed:
                fh.write(data)

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return with_tmp_path(path, write)


def _first_stream(path: Path, data: bytes) -> tuple[bytes, bytes]:
    """(the first xz stream decoded, the bytes after it)."""
    decoder = lzma.LZMADecompressor()
    try:
        head = decoder.decompress(data)
    except lzma.LZMAError:
        raise ValueError(f"{path}: not a spare_gen feed cache (not an xz file)") from None
    if not decoder.eof:
        raise ValueError(f"{path}: truncated spare_gen feed cache (its header stream ends early)")
    return head, decoder.unused_data


def _parse_head(path: Path, head: bytes) -> tuple[dict, bytes]:
    if not head.startswith(MAGIC):
        raise ValueError(f"{path}: not a spare_gen feed cache (export one with `spare-gen cache OUT --task T "
                         f"--export FILE`)")
    at = len(MAGIC) + _LENGTH.size
    (length,) = _LENGTH.unpack(head[len(MAGIC):at])
    header = json.loads(head[at:at + length])
    if header.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: feed cache format {header.get('format_version')!r}; this spare_gen reads "
                         f"{FORMAT_VERSION} (export it again)")
    return header, head[at + length:]


def read_header(path: str | os.PathLike) -> dict:
    """The header of a portable cache file (decodes its first stream only: milliseconds)."""
    path = Path(path)
    decoder = lzma.LZMADecompressor()
    head = b""
    with open(path, "rb") as fh:
        while not decoder.eof:
            block = fh.read(1 << 16)
            if not block:
                raise ValueError(f"{path}: truncated spare_gen feed cache (its header stream ends early)")
            try:
                head += decoder.decompress(block)
            except lzma.LZMAError:
                raise ValueError(f"{path}: not a spare_gen feed cache (not an xz file)") from None
    return _parse_head(path, head)[0]


def read_cache_file(path: str | os.PathLike, *, threads: int | None = None) -> CacheFile:
    """Everything in a portable cache file; the image chunks decoded ``threads`` at a time (default: one per core)."""
    path = Path(path)
    head, rest = _first_stream(path, path.read_bytes())
    header, raw = _parse_head(path, head)
    arrays, at = {}, 0
    for spec in header["arrays"]:
        dtype, shape = np.dtype(spec["dtype"]), tuple(spec["shape"])
        n = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        arrays[spec["name"]] = np.frombuffer(raw[at:at + n], dtype=dtype).reshape(shape).copy()
        at += n
    shape = tuple(header["images"]["shape"])
    images = np.empty(shape, dtype=np.uint8)
    image_bytes = int(np.prod(shape[1:], dtype=np.int64))
    jobs, start, offset = [], 0, 0
    for chunk in header["chunks"]:
        jobs.append((start, chunk["images"], rest[offset:offset + chunk["xz_bytes"]]))
        start += chunk["images"]
        offset += chunk["xz_bytes"]
    if start != shape[0] or offset != len(rest):
        raise ValueError(f"{path}: truncated spare_gen feed cache ({len(rest)} of {offset} image bytes)")
    flat = images.reshape(shape[0], -1)

    def decode(job: tuple[int, int, bytes]) -> None:
        first, count, data = job
        try:
            out = lzma.decompress(data, format=lzma.FORMAT_XZ)
        except lzma.LZMAError as exc:
            raise ValueError(f"{path}: damaged spare_gen feed cache (images {first}..{first + count - 1}: "
                             f"{exc})") from None
        if len(out) != count * image_bytes:
            raise ValueError(f"{path}: damaged spare_gen feed cache (images {first}..{first + count - 1})")
        flat[first:first + count] = np.frombuffer(out, dtype=np.uint8).reshape(count, -1)

    with ThreadPoolExecutor(_threads(threads)) as pool:
        list(pool.map(decode, jobs))
    return CacheFile(header, arrays, images)


def cache_files(folder: str | os.PathLike) -> list[Path]:
    """The portable cache files directly in ``folder`` (``*.sgcache.xz``), sorted."""
    return sorted(p for p in Path(folder).glob(f"*{SUFFIX}") if p.is_file())
