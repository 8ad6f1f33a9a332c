"""``spare-gen train-baseline``: train the small CNN on a task's train split, pick the best epoch on val, predict test.

Writes to ``<out>/baselines/<task>/`` (or ``--dest``): ``predictions_test.csv`` (``question_id,answer``, what
``spare-gen evaluate`` reads), ``curve.png`` (training loss per step, train/val accuracy per epoch),
``history.json`` (the numbers behind the curve, the options, the test score) and ``model.pt`` (best weights).
Every random choice (initial weights, batch order) is seeded from ``derive_seed(seed, "baseline", task, ...)``.
"""

from __future__ import annotations

import copy
import csv
import io
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader

from spare_gen.atomic import write_bytes, write_json, write_text
from spare_gen.baseline.curve import curve_png
from spare_gen.baseline.net import CandidateScorer, PoseClassifier
from spare_gen.config.schema import TaskName
from spare_gen.data.evaluate import evaluate, format_report, multiple_choice_task
from spare_gen.data.tables import load_split
from spare_gen.data.torch import Channels, channel_order, task_dataset
from spare_gen.questions.tasks import TASK_SPECS
from spare_gen.rng import derive_seed

BASELINES_DIR = "baselines"
PREDICTIONS_NAME = "predictions_test.csv"
CURVE_NAME = "curve.png"
HISTORY_NAME = "history.json"
WEIGHTS_NAME = "model.pt"


@dataclass
class TrainOptions:
    epochs: int = 10
    batch_size: int = 16
    size: int = 64
    lr: float = 1e-3
    seed: int = 0
    max_steps: int = 0  # 0 = no limit (a smoke test stops early)
    workers: int = 0
    channels: str = Channels.RGB.value
    device: str = "auto"

    def check(self) -> None:
        for name in ("epochs", "batch_size", "size"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"--lr must be positive, got {self.lr}")
        channel_order(self.channels)


def make_model(task: TaskName, n_choices: int) -> nn.Module:
    """The head the task's spec asks for: candidates scored one by one (with the query pose if the task has one),
    or a classifier over the ``n_choices`` choices."""
    keys = TASK_SPECS[task].loader
    if keys.candidates is None:
        return PoseClassifier(n_choices)
    return CandidateScorer(with_pose=keys.pose is not None)


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ValueError(f"--device: unknown device {name!r}; use auto, cpu or cuda") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: no CUDA GPU is available here; use auto or cpu")
    return device


def logits_of(model: nn.Module, batch: dict, device: torch.device) -> torch.Tensor:
    pose = batch.get("pose")
    return model(batch["inputs"].to(device), None if pose is None else pose.to(device))


@torch.no_grad()
def predict(model: nn.Module, loader: DataLoader, device: torch.device) -> tuple[list[str], list[int], list[int]]:
    """(question ids, predicted answers, true answers) of every item, in loader order."""
    model.eval()
    ids, preds, truth = [], [], []
    for batch in loader:
        preds += logits_of(model, batch, device).argmax(dim=1).tolist()
        ids += list(batch["question_id"])
        truth += batch["answer"].tolist()
    return ids, preds, truth


def accuracy(preds: list[int], truth: list[int]) -> float:
    return sum(p == t for p, t in zip(preds, truth)) / len(truth) if truth else float("nan")


def predictions_csv(ids: list[str], preds: list[int]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["question_id", "answer"])
    writer.writerows(zip(ids, preds))
    return buf.getvalue()


def train(out: str | Path, task: TaskName | str, options: TrainOptions, *, dest: str | Path | None = None,
          progress: bool = True) -> dict:
    """Train, write predictions, curve, history and weights; returns the history (with the test report)."""
    from tqdm.auto import tqdm

    out, task = Path(out), multiple_choice_task(task, "train-baseline trains")
    options.check()
    dest = Path(dest) if dest else out / BASELINES_DIR / task.value
    device = pick_device(options.device)
    torch.manual_seed(derive_seed(options.seed, "baseline", task.value, "init"))
    data = {s: task_dataset(out, task, s, size=options.size, channels=options.channels) for s in ("train", "val", "test")}
    if len(data["train"]) == 0:
        raise ValueError(f"{out}: {task.value} has no train questions")
    shuffle = torch.Generator().manual_seed(derive_seed(options.seed, "baseline", task.value, "shuffle"))
    train_loader = DataLoader(data["train"], batch_size=options.batch_size, shuffle=True, generator=shuffle,
                              num_workers=options.workers)
    eval_loaders = {s: DataLoader(data[s], batch_size=options.batch_size, num_workers=options.workers)
                    for s in ("val", "test")}
    n_choices = TASK_SPECS[task].n_choices(load_split(out, task, "train").slice(0, 1).to_pylist()[0])
    model = make_model(task, n_choices).to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=options.lr)
    loss_fn = nn.CrossEntropyLoss()

    steps_per_epoch = len(train_loader)
    total = options.epochs * steps_per_epoch
    if options.max_steps:
        total = min(total, options.max_steps)
    history: dict = {"task": task.value, "options": asdict(options), "device": str(device),
                     "n": {s: len(d) for s, d in data.items()}, "step_loss": [], "epoch_steps": [],
                     "epoch_loss": [], "train_accuracy": [], "val_accuracy": []}
    best_state, best_val, best_epoch = copy.deepcopy(model.state_dict()), -1.0, 0
    bar = tqdm(total=total, desc=f"train {task.value}", unit="step", disable=not progress, file=sys.stderr)
    step = 0
    for epoch in range(options.epochs):
        model.train()
        losses, correct, seen = [], 0, 0
        for batch in train_loader:
            if step >= total:
                break
            logits = logits_of(model, batch, device)
            target = batch["answer"].to(device)
            loss = loss_fn(logits, target)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
            losses.append(loss.item())
            correct += int((logits.argmax(dim=1) == target).sum())
            seen += len(target)
            bar.update(1)
            bar.set_postfix(epoch=epoch + 1, loss=f"{losses[-1]:.3f}")
        if not losses:
            break
        val_acc = accuracy(*predict(model, eval_loaders["val"], device)[1:])
        history["step_loss"] += losses
        history["epoch_steps"].append(step)
        history["epoch_loss"].append(sum(losses) / len(losses))
        history["train_accuracy"].append(correct / seen)
        history["val_accuracy"].append(val_acc)
        if not val_acc <= best_val:  # the first epoch, any better one; NaN (no val questions) keeps the latest
            best_state, best_val, best_epoch = copy.deepcopy(model.state_dict()), val_acc, epoch + 1
    bar.close()
    model.load_state_dict(best_state)
    history["best_epoch"] = best_epoch

    ids, preds, _ = predict(model, eval_loaders["test"], device)
    pred_path = write_text(dest / PREDICTIONS_NAME, predictions_csv(ids, preds))
    report = evaluate(out, task, "test", pred_path)
    history["test"] = {k: report[k] for k in ("n_questions", "overall", "by_primitives", "chance")}
    chance = 1.0 / n_choices
    title = (f"{task.value}: small CNN from scratch, best epoch {best_epoch}, "
             f"test accuracy {report['overall']['accuracy']:.3f} (chance {chance:.2f})")
    write_bytes(dest / CURVE_NAME, curve_png(history["step_loss"], history["epoch_steps"], history["train_accuracy"],
                                             history["val_accuracy"], chance, title))
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    write_bytes(dest / WEIGHTS_NAME, buf.getvalue())
    write_json(dest / HISTORY_NAME, history)
    history["report_text"] = format_report(report)
    history["dest"] = str(dest)
    return history


def main(out: Path, task: str, options: TrainOptions, dest: Path | None = None, progress: bool = True) -> int:
    history = train(out, task, options, dest=dest, progress=progress)
    print(history["report_text"])
    print(f"spare-gen: baseline written to {history['dest']} ({PREDICTIONS_NAME}, {CURVE_NAME}, {HISTORY_NAME}, "
          f"{WEIGHTS_NAME})")
    return 0
