"""Baselines trained on a dataset's question tasks (the torch extra): SPARE3D's networks (``nets``: VGG-16,
ResNet-50, BagNet-33 in the paper's formulations and recipes, ``options``), spare_gen's small CNN (``net``), the
trainer (``train``), and the torch-free readers of its results: training curves (``curve``) and the Figure 6 table
and chart (``figure6``)."""

import os

# OpenMP threads that wait for work spin on the cores by default: on a shared or busy machine that costs ten times
# the CPU of the work itself (an epoch of 23 CPU s instead of 2.2). Set before torch loads its OpenMP runtime; a
# value the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
