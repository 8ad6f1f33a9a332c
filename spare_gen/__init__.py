"""spare_gen: reproducible SPARE3D-style spatial-reasoning datasets and corrupted-wireframe pools."""

__version__ = "0.1.0"
