"""Discover CAD files in a folder (STEP, BREP, IGES; ABC layout aware), with size limit and de-duplication."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from spare_gen.filehash import sha256_file  # noqa: F401  (re-exported)

ABC_NAME = re.compile(r"^(\d{8})_[0-9a-f]+_step_\d{3}$", re.IGNORECASE)


@dataclass
class FileItem:
    model_id: str
    path: Path
    size: int
    sha256: str
    skip_reason: str = ""



def _safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "model"


def model_id_for(path: Path, root: Path) -> str:
    """``abc_<8-digit id>`` for the ABC layout ``<id>/<id>_<hash>_step_000.step``; else the relative path."""
    m = ABC_NAME.match(path.stem)
    if m:
        return f"abc_{m.group(1)}"
    rel = path.relative_to(root).with_suffix("") if path.is_relative_to(root) else Path(path.stem)
    if rel.parts and rel.parts[0] == "..":
        rel = Path(path.stem)
    return _safe_id("__".join(rel.parts))


def list_paths(root: str | Path, suffixes: list[str], list_file: str | Path = "") -> tuple[Path, list[Path]]:
    """CAD paths under ``root`` (broken links included, so they fail visibly), or the lines of ``list_file``."""
    if list_file:
        lf = Path(list_file)
        if not lf.is_file():
            raise FileNotFoundError(f"models.files.list_file: file {str(lf)!r} does not exist")
        base = Path(root) if root else lf.parent
        lines = [ln.strip() for ln in lf.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
        return base, sorted(p if p.is_absolute() else base / p for p in map(Path, lines))
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"models.files.root: folder {str(root)!r} does not exist")
    wanted = {s.lower() for s in suffixes}
    return root, sorted(
        p for p in root.rglob("*") if (p.is_file() or p.is_symlink()) and p.suffix.lower() in wanted
    )


def _digest(path: Path) -> str:
    """SHA-256 of a file, or "" if it cannot be read (the model stage then records why, as a failed row)."""
    try:
        return sha256_file(path)
    except OSError:
        return ""


def discover(
    root: str | Path, suffixes: list[str], max_mb: float, limit: int = 0, list_file: str | Path = ""
) -> list[FileItem]:
    """CAD files sorted by path; over-size and duplicate-content files carry a skip reason.

    Missing or unreadable paths are kept (with no hash) so the model stage records them as failed rows.
    """
    root, paths = list_paths(root, suffixes, list_file)
    if limit:
        paths = paths[:limit]
    items: list[FileItem] = []
    seen_hash: dict[str, str] = {}
    seen_id: set[str] = set()
    for p in paths:
        size = p.stat().st_size if p.is_file() else 0
        mid = model_id_for(p, root)
        digest = _digest(p) if p.is_file() and size <= max_mb * 1e6 else ""
        if mid in seen_id:
            mid = f"{mid}_{(digest or hashlib.sha256(str(p).encode()).hexdigest())[:8]}"
        seen_id.add(mid)
        item = FileItem(mid, p, size, digest)
        if size > max_mb * 1e6:
            item.skip_reason = f"{p.name}: {size / 1e6:.1f} MB is over the models.files.max_mb limit of {max_mb:g} MB"
        elif digest and digest in seen_hash:
            item.skip_reason = f"{p.name}: identical content to {seen_hash[digest]} (same sha256), kept once"
        else:
            seen_hash[digest] = mid
        items.append(item)
    return items
