"""Read STEP / IGES / BREP files and write STEP / BREP, with readable errors."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from OCP.BRep import BRep_Builder
from OCP.BRepTools import BRepTools
from OCP.IFSelect import IFSelect_RetDone
from OCP.IGESControl import IGESControl_Reader
from OCP.Interface import Interface_Static
from OCP.STEPControl import STEPControl_AsIs, STEPControl_Reader, STEPControl_Writer
from OCP.TopoDS import TopoDS_Shape

from spare_gen.atomic import with_tmp_path, write_bytes

STEP_SUFFIXES = (".step", ".stp")
IGES_SUFFIXES = (".iges", ".igs")
BREP_SUFFIXES = (".brep", ".brp")
CAD_SUFFIXES = STEP_SUFFIXES + IGES_SUFFIXES + BREP_SUFFIXES


class CadReadError(ValueError):
    """A CAD file that could not be read into a non-empty shape."""


def occt_version() -> str:
    """The OpenCASCADE version of the OCP wheel in use."""
    from importlib.metadata import version

    try:
        return version("cadquery-ocp-novtk")
    except Exception:  # pragma: no cover - other OCP distributions
        import OCP

        return getattr(OCP, "__version__", "unknown")


def _is_null(shape: TopoDS_Shape) -> bool:
    return shape is None or shape.IsNull()


@contextlib.contextmanager
def occt_path(path: Path) -> Iterator[str]:
    """A name OCCT opens ``path`` by: the path itself, or, for a name that is not UTF-8 (bytes such as
    ``caf\\xe9.step``: OCCT takes a path as UTF-8 text, and Python hands such a name on with surrogates that no text
    encoding holds), a link to it with a plain name in a temporary folder, removed afterwards."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        with tempfile.TemporaryDirectory(prefix="spare_gen-read-") as folder:
            link = os.path.join(folder, "model" + path.suffix.lower())
            os.symlink(os.path.abspath(path), link)
            yield link
        return
    yield text


def _read_xde(reader, path: Path, kind: str) -> TopoDS_Shape:
    with occt_path(path) as name:
        status = reader.ReadFile(name)
    if status != IFSelect_RetDone:
        raise CadReadError(f"{path.name}: not a readable {kind} file (reader status {int(status)})")
    if reader.NbRootsForTransfer() == 0:
        raise CadReadError(f"{path.name}: {kind} file has no shape to transfer")
    reader.TransferRoots()
    shape = reader.OneShape()
    if _is_null(shape):
        raise CadReadError(f"{path.name}: {kind} transfer gave an empty shape")
    return shape


STEP_HEADER_BYTES = 8192  # ISO 10303-21 puts "ISO-10303-21;" first, but comments may come before it
_STEP_MAGIC = re.compile(rb"^\s*(?:/\*.*?\*/\s*)*ISO-10303-21\s*;", re.DOTALL)


def is_step_text(head: bytes) -> bool:
    """True if ``head`` (the first bytes of a file) starts like an ISO 10303-21 exchange file.

    White space and ``/* ... */`` comments may precede the ``ISO-10303-21;`` keyword.
    """
    return _STEP_MAGIC.match(head) is not None


def read_shape(path: str | os.PathLike) -> TopoDS_Shape:
    """Read a STEP, IGES or BREP file by its suffix; raise CadReadError naming the file and the problem."""
    path = Path(path)
    if not path.exists():
        raise CadReadError(f"{path}: file does not exist")
    try:
        with open(path, "rb") as fh:
            head = fh.read(STEP_HEADER_BYTES)
    except OSError as exc:  # permission denied, a folder, an I/O error: this file's fault, not the run's
        raise CadReadError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
    if not head:
        raise CadReadError(f"{path.name}: file is empty (0 bytes)")
    suffix = path.suffix.lower()
    if suffix in STEP_SUFFIXES:
        if not is_step_text(head):
            raise CadReadError(f"{path.name}: not a STEP file (no ISO-10303-21 header in the first "
                               f"{STEP_HEADER_BYTES} bytes)")
        return _read_xde(STEPControl_Reader(), path, "STEP")
    if suffix in IGES_SUFFIXES:
        return _read_xde(IGESControl_Reader(), path, "IGES")
    if suffix in BREP_SUFFIXES:
        shape = TopoDS_Shape()
        with occt_path(path) as name:
            ok = BRepTools.Read_s(shape, name, BRep_Builder())
        if not ok or _is_null(shape):
            raise CadReadError(f"{path.name}: not a readable BREP file")
        return shape
    raise CadReadError(f"{path.name}: unknown CAD suffix {suffix!r}; expected one of {', '.join(CAD_SUFFIXES)}")


_STEP_TIMESTAMP = re.compile(rb"(FILE_NAME\('[^']*',)'[^']*'")
# OCCT names products "<name> <n>" with a per-process write counter: replace it by the plain name.
_STEP_PRODUCT = re.compile(rb"PRODUCT\('[^']*',\s*'[^']*'")
# OCCT numbers assembly usages with another per-process counter: renumber them 1, 2, ... in file order.
_STEP_NAUO = re.compile(rb"NEXT_ASSEMBLY_USAGE_OCCURRENCE\('[^']*'")


def canonical_step(data: bytes, product: bytes) -> bytes:
    """STEP bytes with every per-process value replaced (timestamp, product names, usage ids)."""
    data = _STEP_TIMESTAMP.sub(rb"\1'2000-01-01T00:00:00'", data, count=1)
    data = _STEP_PRODUCT.sub(b"PRODUCT('" + product + b"','" + product + b"'", data)
    counter = iter(range(1, 1 << 62))
    return _STEP_NAUO.sub(lambda _: b"NEXT_ASSEMBLY_USAGE_OCCURRENCE('%d'" % next(counter), data)


def step_bytes(shape: TopoDS_Shape, name: str = "spare_gen") -> bytes:
    """The STEP (AP214) text of ``shape``, written in memory, with every per-process value made canonical."""
    Interface_Static.SetCVal_s("write.step.schema", "AP214IS")
    writer = STEPControl_Writer()
    if writer.Transfer(shape, STEPControl_AsIs) != IFSelect_RetDone:
        raise CadReadError(f"{name}: STEP transfer failed")
    stream = io.BytesIO()
    if writer.WriteStream(stream) != IFSelect_RetDone:
        raise CadReadError(f"{name}: STEP write failed")
    return canonical_step(stream.getvalue(), re.sub(r"[^A-Za-z0-9._ -]", "_", name).encode())


def write_step(shape: TopoDS_Shape, path: str | os.PathLike, name: str = "spare_gen") -> bytes:
    """Write a STEP file atomically, with a fixed header timestamp so equal shapes give equal bytes; return them."""
    try:
        data = step_bytes(shape, name)
    except CadReadError as exc:
        raise CadReadError(f"{Path(path).name}: {str(exc).split(': ', 1)[1]}") from None
    write_bytes(path, data)
    return data


def write_brep(shape: TopoDS_Shape, path: str | os.PathLike) -> Path:
    return with_tmp_path(path, lambda tmp: BRepTools.Write_s(shape, str(tmp)))
