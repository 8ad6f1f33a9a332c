"""Baselines trained on a dataset's question tasks (the torch extra): SPARE3D's networks (``nets``: VGG-16,
ResNet-50, BagNet-33 in the paper's formulations and recipes, ``options``), spare_gen's small CNN (``net``), the
trainer (``train``), and the torch-free readers of its results: training curves (``curve``) and the Figure 6 table
and chart (``figure6``)."""
