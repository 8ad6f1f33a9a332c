"""Severity calibration over many random CSG models: visible, inside the canvas, high worse than low.

Usage: python benchmarks/pool_calibration.py [N_MODELS=120] [SEED=0]
Builds N random CSG solids as the models stage does (2-4 primitives, the stage's validity check),
extracts their ground-truth wireframes, makes every variant and prints, per kind x severity: how many
variants are invisible (< 1 px difference at 384 px) or have vertices off the canvas, the median
targeted score, and per kind the share of models whose targeted score is strictly lower at high than
at low (the acceptance asks >= 95%). Not a timing benchmark.
"""

from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np

from spare_gen import cad
from spare_gen.stages.pool.child import brep_wireframe
from spare_gen.stages.models.csg import random_program
from spare_gen.stages.models.child import check_csg
from spare_gen.rng import derive_rng
from spare_gen.rating.calibration import check_corruptions
from spare_gen.rating.corruptions import SEVERITIES, TARGETED_METRIC, get_corruption_names
from spare_gen.stages.pool.corruptions import make_corruptions

IMAGE_SIZE, THRESHOLD = 384, 0.02


def ground_truths(n: int, seed: int):
    made, i = 0, 0
    while made < n:
        program = random_program(2 + i % 3, derive_rng(seed, "calibration-models", i))
        i += 1
        try:
            shape = cad.build_csg(program)
            if check_csg(shape, program, 0.05)[0] is not None:
                continue
            gt = brep_wireframe(shape).wireframe
        except (cad.CsgError, ValueError):
            continue
        made += 1
        yield f"csg{i - 1}", gt


def main(n: int = 120, seed: int = 0) -> int:
    invisible, outside, scores = defaultdict(int), defaultdict(int), defaultdict(list)
    worse, failed, models = defaultdict(int), 0, 0
    for model_id, gt in ground_truths(n, seed):
        models += 1
        variants = make_corruptions(gt, model_id, seed)
        failed += sum(not v.ok for v in variants)
        checks = check_corruptions(gt, [(v.kind, v.severity, v.wireframe) for v in variants if v.ok],
                                IMAGE_SIZE, THRESHOLD, THRESHOLD)  # fmt: skip
        by_type = {}
        for c in checks:
            invisible[c.kind, c.severity] += c.visible_px < 1
            outside[c.kind, c.severity] += c.outside > 0
            scores[c.kind, c.severity].append(c.targeted)
            by_type[c.kind, c.severity] = c.targeted
        for kind in get_corruption_names():
            worse[kind] += by_type.get((kind, "high"), 1.0) < by_type.get((kind, "low"), 0.0)
    print(f"{models} CSG models (seed {seed}), {failed} failed variants, pictures {IMAGE_SIZE} px")
    print("| kind | severity | targeted metric | median | invisible | off canvas |")
    print("|---|---|---|---|---|---|")
    for kind in get_corruption_names():
        for severity in SEVERITIES:
            key = (kind, severity)
            print(f"| {kind} | {severity} | {TARGETED_METRIC[kind]} | {np.median(scores[key]):.3f} | "
                  f"{invisible[key]} | {outside[key]} |")  # fmt: skip
    shares = {kind: worse[kind] / models for kind in get_corruption_names()}
    print("high strictly worse than low: " + ", ".join(f"{k} {v:.1%}" for k, v in shares.items()))
    ok = min(shares.values()) >= 0.95 and not any(invisible.values()) and not any(outside.values())
    print("calibration " + ("PASSES" if ok else "FAILS"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*(int(a) for a in sys.argv[1:3])))
