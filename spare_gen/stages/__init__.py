"""The pipeline's stages, one package each, in run order:

1. ``models``    -- CSG (or imported CAD) models: STEP/BREP files and ``models.parquet``;
2. ``drawings``  -- three-view and isometric drawings of each model (hidden-line removal, SVG and PNG);
3. ``questions`` -- the question datasets of every task (``questions/<task>/<split>.parquet``);
4. ``pool``      -- the wireframe pool: ground-truth wireframes, corrupted variants, pictures and rater pairs.

The stage table itself (names, folders, help, the config switches, where each implementation lives) is
``spare_gen/stage_table.py``; the regenerate job runs the listed stages in that order.
This package imports nothing: importing ``spare_gen.stages`` does not load a driver. The library code the stages
use sits beside them: ``spare_gen.rating`` (the pool's wireframe science), ``spare_gen.metrics``,
``spare_gen.store`` (dataset plumbing), ``spare_gen.runner`` and ``spare_gen.cad``.
"""
