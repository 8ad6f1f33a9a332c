"""3D wireframes: the graph model, extraction from B-reps, corruptions, pools and pictures."""

from spare_gen.wireframes.model import CORNER, CURVE, Wireframe

__all__ = ["Wireframe", "CORNER", "CURVE"]
