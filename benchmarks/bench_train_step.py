"""Seconds per training step of each `train-baseline --arch` on this machine's CPU (the docs' per-arch table).

One isometric_to_pose multi-class step (forward, cross-entropy, backward, Adam) at the Figure 6 recipe's batch and
size (the small CNN: its own 16 questions at 64 px), on random inputs of the feed's shapes: the time of a step does
not depend on what the pixels show. torch runs ``--threads`` threads with ``OMP_WAIT_POLICY=PASSIVE`` (as
``train-baseline`` sets it); the first step warms up and is not counted. Prints, per arch, the wall and CPU seconds
of a step and of an epoch at 4,000 questions. Run from the repository root:

    python benchmarks/bench_train_step.py --archs small resnet50 bagnet33 --steps 2 --micro 10
"""

from __future__ import annotations

import argparse
import os
import resource
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads, as train-baseline does

import torch  # noqa: E402

from spare_gen.baseline.nets import DRAWING_CHANNELS, VIEW_CHANNELS, make_model  # noqa: E402
from spare_gen.baseline.options import Arch, Formulation, TrainOptions  # noqa: E402
from spare_gen.baseline.train import loss_of, optimiser_for  # noqa: E402
from spare_gen.config.schema import TaskName  # noqa: E402

EPOCH_QUESTIONS = 4000


def step_seconds(arch: Arch, steps: int, micro: int | None) -> tuple[int, int, float, float]:
    """(batch, size, wall s, CPU s) of one step, the mean over ``steps`` after a warm-up step. ``micro``: the
    step's questions go through forward and backward ``micro`` at a time (gradients summed, one Adam step), so a
    big recipe batch fits in memory; the arithmetic, and on a CPU the time, are a whole batch's."""
    options = TrainOptions(arch=arch).resolved(TaskName.ISOMETRIC_TO_POSE)
    torch.manual_seed(0)
    model = make_model(Formulation.MULTICLASS, arch)
    optimiser, _ = optimiser_for(model, options, steps + 1)
    b, s = options.batch_size, options.size
    chunks = [min(micro or b, b - start) for start in range(0, b, micro or b)]
    batches = [{"views": torch.rand(n, VIEW_CHANNELS, s, s), "drawing": torch.rand(n, DRAWING_CHANNELS, s, s),
                "answer": torch.randint(0, 4, (n,))} for n in sorted(set(chunks))]
    by_size = {len(x["answer"]): x for x in batches}
    model.train()
    walls, cpus = [], []
    for _ in range(steps + 1):
        wall, cpu = time.perf_counter(), time.process_time()
        optimiser.zero_grad()
        for n in chunks:
            batch = by_size[n]
            loss = loss_of(options.formulation, model(batch).float(), batch["answer"]) * (n / b)
            loss.backward()
        optimiser.step()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return b, s, sum(walls[1:]) / steps, sum(cpus[1:]) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", nargs="+", default=["small", "resnet50", "bagnet33"], choices=[a.value for a in Arch
                                                                                                 if a is not Arch.HYPOTHESES])
    parser.add_argument("--steps", type=int, default=2, help="timed steps after the warm-up step")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--micro", type=int, default=None, help="questions per forward/backward within a step "
                        "(default: the whole batch; ResNet-50's 70 at 200 px need about 20 GB)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} threads, OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, "
          f"load {os.getloadavg()[0]:.1f}")
    for name in args.archs:
        b, s, wall, cpu = step_seconds(Arch(name), args.steps, args.micro)
        epoch = -(-EPOCH_QUESTIONS // b)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"{name}: batch {b}{f' ({args.micro} at a time)' if args.micro else ''}, {s} px: {wall:.2f} s a step "
              f"({cpu:.2f} CPU s); an epoch of {EPOCH_QUESTIONS} questions ({epoch} steps) {wall * epoch:.0f} s "
              f"({cpu * epoch:.0f} CPU s); peak memory so far {peak:.1f} GB; load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
