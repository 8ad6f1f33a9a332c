"""3D wireframes: the graph model, extraction from B-reps, corruptions, pools and pictures."""

from spare_gen.wireframes.model import CORNER, CURVE, EAVE, RIDGE, Wireframe, corner_mask

__all__ = ["Wireframe", "CORNER", "CURVE", "EAVE", "RIDGE", "corner_mask"]
