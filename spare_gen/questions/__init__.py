"""SPARE3D question sets: the five tasks, bias-free by construction (see driver.py for the stage)."""
