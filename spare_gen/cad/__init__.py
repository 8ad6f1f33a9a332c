"""The OpenCASCADE boundary: the only package that imports OCP.

Everything outside ``spare_gen.cad`` handles shapes as opaque objects and calls the functions
re-exported here, so a pythonocc (or other) backend could replace this package alone.
"""

from OCP.Message import Message, Message_Gravity

from spare_gen.cad.build import CsgError, build_csg, fuse_all
from spare_gen.cad.house import HouseError, build_house
from spare_gen.cad.io import CadReadError, occt_version, read_shape, write_brep, write_step
from spare_gen.cad.props import shape_stats, solid_groups


def _quiet_occt() -> None:
    """Keep OCCT's transfer statistics and warnings out of the user's terminal (failures still print)."""
    for printer in Message.DefaultMessenger_s().Printers():
        printer.SetTraceLevel(Message_Gravity.Message_Fail)


_quiet_occt()

__all__ = [
    "CadReadError",
    "CsgError",
    "HouseError",
    "build_csg",
    "build_house",
    "fuse_all",
    "occt_version",
    "read_shape",
    "shape_stats",
    "solid_groups",
    "write_brep",
    "write_step",
]
