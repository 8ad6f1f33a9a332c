"""The input formats of every ``spare-gen`` subcommand, with an example, shown at the end of its ``--help``."""

from __future__ import annotations

CONFIG_INPUT = """input: a TOML recipe (every key, type, range and default in spare_gen/config/schema.py), e.g.

  seed = 0
  out = "outputs/default"
  [models.csg]
  count = 240
  [questions]
  split = [0.8, 0.1, 0.1]        # train, val, test fractions, summing to 1
  [questions.counts]
  three_view_to_isometric = 40
  [card]
  license = "cc-by-4.0"

  --set KEY=VALUE takes a TOML literal: --set render.size=256 --set models.csg.primitive_counts=[3,4]
  A bad config stops before any work: one line naming the file or --set argument, key and value; exit 2."""

DATASET_INPUT = """input: OUT is a dataset folder written by `spare-gen run` (dataset.json, models.parquet, questions/<task>/
{train,val,test}.parquet, drawings/...), e.g. outputs/default"""

EPILOGS = {
    "run": CONFIG_INPUT,
    "pool": CONFIG_INPUT,
    "config": CONFIG_INPUT,
    "validate": DATASET_INPUT + "\n\nexit codes: 0 every rule holds, 1 a violation (one line each), 2 bad input",
    "annotate": """input: OUT is a pool folder written by `spare-gen run` or `spare-gen pool` (pairs.parquet,
corruptions.parquet, wireframes.parquet), e.g.

  spare-gen annotate outputs/default --rater alice      # then open http://127.0.0.1:8765/?rater=alice""",
    "simulate-raters": """input: OUT is a pool folder (pairs.parquet, corruptions.parquet with the metric columns), e.g.

  spare-gen simulate-raters outputs/default --group '0.9,0.9,0.8:edge_f1' --group '0.9,0.9:corner_f1'
  writes an answers CSV in the format `spare-gen rank` reads""",
    "learn-metric": """input: OUT is a pool folder; ANSWERS is an answers CSV or a folder of them (pair_id,rater_id,choice),
e.g. spare-gen learn-metric outputs/default outputs/default/annotations
     spare-gen learn-metric outputs/default outputs/default/annotations --features image --backbone /models/dinov2-small
--features image renders each candidate over its ground truth, encodes it with a frozen DINOv2 (a saved folder or a
cached Hugging Face name; never downloaded) and trains an MLP head; --backbone random-small is for tests and dry runs""",
    "export-spare3d": DATASET_INPUT + """ (made with PNGs); DEST is new, empty, or an earlier export, e.g.

  spare-gen export-spare3d outputs/default /data/spare3d_like --tasks isometric_to_pose --splits train test""",
    "train-baseline": DATASET_INPUT + """ with the task's train/val/test splits, e.g.

  spare-gen train-baseline outputs/default --task isometric_to_pose --epochs 20""",
    "audit": DATASET_INPUT + """

exit codes: 0 every probe ran and is within chance; 1 a probe is not within chance (a shortcut);
3 a probe could not run (empty split, too few questions): "not audited", never "within chance"; 2 bad input.
Writes reports/audit.json and the "Bias audit" section of OUT/README.md; prints a table and a summary line.""",
    "evaluate": DATASET_INPUT + """

PRED.csv: a header and the columns question_id,answer (more columns are ignored); answer is the chosen
index 0..3, one row per question of the split, e.g.

  question_id,answer
  three_view_to_isometric-test-00000,2
  three_view_to_isometric-test-00001,0""",
    "evaluate-poses": DATASET_INPUT + """ (run with render.random_views = K > 0)

PRED.csv (or .parquet): columns model_id,view,r00,r01,r02,r10,r11,r12,r20,r21,r22,px,py,pz: the
world-to-camera rotation (row-major; rows = camera right, up, towards the viewer) and the camera centre
in model coordinates, one row per random view (rand_*) of each predicted model, e.g.

  model_id,view,r00,r01,r02,r10,r11,r12,r20,r21,r22,px,py,pz
  csg_000003,rand_000,1,0,0,0,1,0,0,0,1,0.1,0.2,3.5""",
    "metric-report": """input: OUT is a folder with a corrupted-wireframe pool (`spare-gen run` or `spare-gen pool`):
models.parquet, wireframes.parquet, corruptions.parquet, e.g.

  spare-gen metric-report outputs/default --max-models 4""",
    "rank": """input: OUT is a pool folder (pairs.parquet, corruptions.parquet); ANSWERS.csv has a header and the columns
pair_id,rater_id,choice where choice is left, right or equal (pair ids from OUT/pool/annotation_pairs.csv), e.g.

  pair_id,rater_id,choice
  csg_000007-p0000,rater_a,left
  csg_000007-p0001,rater_a,equal""",
    "export": DATASET_INPUT + """

writes OUT/exports/<task>_<split>_<size>.npz (or --dest): question_id, n_primitives, views (N, 3, H, W, 3)
uint8 F, R, T, and by task iso, pose, candidates (N, 4, H, W, 3), answer, target. Example:

  spare-gen export outputs/default --task pose_to_isometric --split train --size 64""",
    "show": DATASET_INPUT + """

writes OUT/show/index.html (or --dest): a self-contained page (drawings embedded) of N questions per task
with their drawings, a picture of the pose cube for the pose tasks, and each answer behind a toggle. Example:

  spare-gen show outputs/default --task pose_to_isometric --n 6""",
}
