"""`spare-gen evaluate-poses OUT PRED.csv`: TAS / RAS / PAS and ATE of camera-pose predictions on the random views.

Its arguments and help, all that `--help` imports (nothing heavy); the command runs in ``spare_gen.cli.evaluate_poses``.
"""

from __future__ import annotations

import argparse

from spare_gen.cli.common import DATASET_INPUT

EPILOG = DATASET_INPUT + """ (run with render.random_views = K > 0)

PRED.csv (or .parquet): columns model_id,view,r00,r01,r02,r10,r11,r12,r20,r21,r22,px,py,pz: the
world-to-camera rotation (row-major; rows = camera right, up, towards the viewer) and the camera centre
in model coordinates, one row per random view (rand_*) of each predicted model, e.g.

  model_id,view,r00,r01,r02,r10,r11,r12,r20,r21,r22,px,py,pz
  csg_000003,rand_000,1,0,0,0,1,0,0,0,1,0.1,0.2,3.5"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="a dataset folder written by `spare-gen run` with render.random_views > 0")
    p.add_argument("predictions", help="CSV or Parquet: model_id,view,rotation (9 values),position (3 values)")
