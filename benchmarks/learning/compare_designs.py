"""The design comparison behind ``--arch hypotheses`` (benchmarks/learning/README.md): isometric_to_pose designs
trained on a dataset's train split (or the first N questions of it) with the hypotheses recipe (AdamW, one-cycle,
batch 32), scored on every val and test question after each epoch (no epoch chosen).

    python benchmarks/learning/compare_designs.py ../shared/data/i2p_upper_5000 hypotheses --epochs 15
    python benchmarks/learning/compare_designs.py ../shared/data/i2p_upper_5000 unwarped --epochs 10
    python benchmarks/learning/compare_designs.py ../shared/data/i2p_upper_5000 stack --epochs 10 [--blank]

Designs: ``hypotheses`` (spare_gen.baseline.pose_net, the library's network); ``unwarped`` (the same, with the
re-arranged views stacked as drawn, not warped onto their faces); ``stack`` (early fusion of the four drawings' ink
with two position channels, one 4-way classifier: what a plain CNN does with the question). Prints one line per
epoch and, at the end, the JSON of the run (accuracy per epoch, CPU seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from spare_gen.baseline.options import Arch, TrainOptions  # noqa: E402
from spare_gen.baseline.pose_net import WORK_SIZE, PoseHypotheses, _block, ink  # noqa: E402
from spare_gen.baseline.train import Resident, load_splits, optimiser_for  # noqa: E402


class Stack(nn.Module):
    """The four drawings' ink (8 channels) and x, y position channels -> six convolutions -> 4 logits."""

    def __init__(self, width: int = 32):
        super().__init__()
        w = width
        self.features = nn.Sequential(_block(10, w // 2, 2), _block(w // 2, w), _block(w, w, 2), _block(w, 2 * w),
                                      _block(2 * w, 2 * w, 2), _block(2 * w, 2 * w))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * w * (WORK_SIZE // 8) ** 2, 64), nn.ReLU(True),
                                  nn.Dropout(0.3), nn.Linear(64, 4))

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        b = batch["drawing"].shape[0]
        views = ink(batch["views"].reshape(b * 3, 3, *batch["views"].shape[-2:])).view(b, 6, WORK_SIZE, WORK_SIZE)
        x = torch.cat([views, ink(batch["drawing"])], 1)
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, WORK_SIZE), torch.linspace(-1, 1, WORK_SIZE), indexing="ij")
        x = torch.cat([x, yy.expand(b, 1, -1, -1), xx.expand(b, 1, -1, -1)], 1)
        return self.head(self.features(x))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source")
    p.add_argument("design", choices=("hypotheses", "unwarped", "stack"))
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--questions", type=int, default=None, help="the train split's first N questions")
    p.add_argument("--blank", action="store_true", help="F, R, T as blank paper")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    options = TrainOptions(arch=Arch.HYPOTHESES, epochs=args.epochs, seed=args.seed,
                           blank_views=args.blank).resolved("isometric_to_pose")
    data = load_splits(Path(args.source), "isometric_to_pose", options, torch.device("cpu"))
    train = data["train"] if args.questions is None else data["train"].subset(list(range(args.questions)))
    held = Resident.joined([data["val"], data["test"]])
    torch.manual_seed(args.seed)
    model = Stack() if args.design == "stack" else PoseHypotheses(train.choice_poses, warp=args.design != "unwarped")
    steps = args.epochs * -(-len(train) // options.batch_size)
    optimiser, schedule = optimiser_for(model, options, steps)
    order_gen = torch.Generator().manual_seed(args.seed)
    record = {"design": args.design, "blank": args.blank, "n_train": len(train), "n_held_out": len(held),
              "epochs": args.epochs, "seed": args.seed, "test_accuracy": [], "source": args.source}
    tick, step = time.process_time(), 0
    for epoch in range(args.epochs):
        model.train()
        for batch in train.batches(options.batch_size, torch.randperm(len(train), generator=order_gen), args.blank):
            loss = F.cross_entropy(model(batch), batch["answer"])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
            if step < steps:
                schedule.step()
        model.eval()
        with torch.no_grad():
            correct = sum(int((model(b).argmax(1) == b["answer"]).sum()) for b in held.batches(200, None, args.blank))
        record["test_accuracy"].append(correct / len(held))
        print(f"{args.design}{' blank' if args.blank else ''} n={len(train)} epoch {epoch + 1}: held-out "
              f"{100 * correct / len(held):.1f} % ({time.process_time() - tick:.0f} CPU s)", flush=True)
    record["cpu_seconds"] = time.process_time() - tick
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
