"""The names of the 11 SPARE3D poses (F, R, T and isometric 1-8) and of the random views, without numpy: what the
tasks' layout and the commands' ``--help`` need of the canvas (``spare_gen.canvas.poses`` holds their cameras)."""

from __future__ import annotations

FIXED_VIEWS = ("f", "r", "t", "1", "2", "3", "4", "5", "6", "7", "8")
VIEWS = FIXED_VIEWS
THREE_VIEWS = ("f", "r", "t")
ISOMETRIC_VIEWS = FIXED_VIEWS[3:]
RANDOM_VIEW_PREFIX = "rand_"
