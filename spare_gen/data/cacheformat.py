"""The portable feed cache's constants, without numpy: ``spare-gen cache --help`` shows its file name's ending and xz
preset; ``spare_gen.data.cachefile`` writes and reads the files (their layout is described there)."""

from __future__ import annotations

MAGIC = b"spare_gen feed cache\n"
FORMAT_VERSION = 1  # bump when the layout changes; a reader refuses other versions
SUFFIX = ".sgcache.xz"
CHUNK_BYTES = 32 << 20  # raw image bytes per xz stream: big enough for xz's matches, small enough to decode in parallel
XZ_PRESET = 9
