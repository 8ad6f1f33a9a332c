"""Using a generated dataset: loaders (numpy; ``spare_gen.data.torch`` for PyTorch), scoring and pose scoring."""

from spare_gen.data.loaders import Source, iter_questions, read_image
from spare_gen.data.tables import DrawingVectors, load_split, load_split_pandas

__all__ = ["DrawingVectors", "Source", "iter_questions", "load_split", "load_split_pandas", "read_image"]
