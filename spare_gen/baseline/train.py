"""``spare-gen train-baseline``: train a baseline on a task's train split, pick the best epoch on val, predict test.

The networks are SPARE3D's (``nets``: VGG-16, ResNet-50, BagNet-33 in the binary, metric-learning or multi-class
formulation of the supplementary) or the small CNN, with the recipe's learning rate, batch size and epochs
(``options``). Each split is read once from the training feed (``spare_gen.data.feed``: uint8, F, R, T once per
question, its decoded cache reused across runs) into uint8 tensors on the training device (GPU memory when there is
one), so an epoch costs indexing, not PNG decoding; images become float in [0, 1] only there.

Writes to ``<out>/baselines/<task>/`` (or ``--dest``): ``predictions_test.csv`` (``question_id,answer``, what
``spare-gen evaluate`` reads), ``curve.png`` (training loss per step, train/val/test accuracy per epoch; ``curve.svg``
and ``curve.pdf`` beside it),
``history.json`` (the numbers behind the curve, the options, samples per second, the test report) and ``model.pt``
(best weights). Every random choice (initial weights, batch order) is seeded from
``derive_seed(seed, "baseline", task, ...)``.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
import time
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader

from spare_gen import console
from spare_gen.atomic import write_bytes, write_json, write_text
from spare_gen.baseline.curve import curve_files
from spare_gen.baseline.nets import make_model
from spare_gen.baseline.options import MARGIN, Arch, Formulation, TrainOptions
from spare_gen.config.schema import TaskName
from spare_gen.data.evaluate import evaluate, format_report, multiple_choice_task
from spare_gen.data.feed import collate, feed_dataset
from spare_gen.stages.questions.tasks import TASK_SPECS, dataset_choices
from spare_gen.rng import derive_seed

BASELINES_DIR = "baselines"
PREDICTIONS_NAME = "predictions_test.csv"
CURVE_NAME = "curve.png"
HISTORY_NAME = "history.json"
WEIGHTS_NAME = "model.pt"
IMAGE_KEYS = ("views", "candidates", "drawing")
MODEL_KEYS = (*IMAGE_KEYS, "pose", "answer")  # what a batch hands a model and its loss
DECODE_BATCH = 64
BLANK = 255  # a blank drawing is paper with no ink: white in every channel


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


class Resident:
    """One split of the feed (a ``spare_gen.data.feed.FeedDataset``) as uint8 tensors on ``device``; batches are
    index gathers, floats made there."""

    def __init__(self, dataset, device: torch.device, *, workers: int = 0):
        parts: dict[str, list[torch.Tensor]] = {}
        self.ids: list[str] = []
        for batch in DataLoader(dataset, batch_size=DECODE_BATCH, num_workers=workers, collate_fn=collate):
            self.ids += batch["question_id"]
            for key in MODEL_KEYS:
                if key in batch:
                    parts.setdefault(key, []).append(batch[key])
        self.tensors = {k: torch.cat(v).to(device) for k, v in parts.items()}

    def __len__(self) -> int:
        return len(self.ids)

    def batch(self, index: torch.Tensor, blank_views: bool = False) -> dict[str, torch.Tensor]:
        """The questions at ``index``, images as float32 in [0, 1]; ``blank_views``: F, R, T as blank paper."""
        out = {}
        for key, value in self.tensors.items():
            picked = value.index_select(0, index.to(value.device))
            if blank_views and key == "views":
                picked = torch.full_like(picked, BLANK)
            out[key] = picked.float().div_(255) if key in IMAGE_KEYS else picked
        return out

    def batches(self, size: int, order: torch.Tensor | None = None, blank_views: bool = False):
        order = torch.arange(len(self)) if order is None else order
        for start in range(0, len(self), size):
            yield self.batch(order[start:start + size], blank_views)


def load_splits(out: Path, task: TaskName, options: TrainOptions, device: torch.device) -> dict[str, Resident]:
    """The train, val and test splits at the options' size and channel order, on ``device`` (each decoded once into
    the feed's cache, which later runs reuse)."""
    return {s: Resident(feed_dataset(out, task, s, size=options.size, channels=options.channels), device,
                        workers=options.workers) for s in ("train", "val", "test")}


def loss_of(formulation: Formulation, logits: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
    """Binary: BCE of each candidate's score against the one-hot answer (SPARE3D's BCEWithLogitsLoss);
    metric: margin ranking of the right candidate's distance against each wrong one's (margin 2, mean of the
    three); multi-class: cross-entropy."""
    if formulation is Formulation.BINARY:
        return F.binary_cross_entropy_with_logits(logits, F.one_hot(answer, logits.shape[1]).to(logits.dtype))
    if formulation is Formulation.METRIC:  # logits are minus distances: d_right - d_wrong = s_wrong - s_right
        right = logits.gather(1, answer.unsqueeze(1))
        hinge = F.relu(logits - right + MARGIN)
        wrong = 1.0 - F.one_hot(answer, logits.shape[1]).to(logits.dtype)
        return (hinge * wrong).sum(dim=1).div(wrong.sum(dim=1)).mean()
    return F.cross_entropy(logits, answer)


def task_model(out: Path, task: TaskName, options: TrainOptions) -> nn.Module:
    """The head the task's spec asks for (the query pose joins the candidates' features when the task has one), over
    as many choices as the dataset's questions offer."""
    return make_model(options.formulation, options.arch, with_pose=TASK_SPECS[task].loader.pose is not None,
                      n_choices=dataset_choices(out, task))


def autocast(device: torch.device, enabled: bool):
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=enabled)


@torch.no_grad()
def predict(model: nn.Module, data: Resident, options: TrainOptions, device: torch.device
            ) -> tuple[list[int], list[int]]:
    """(predicted answers, true answers) of every question, in split order."""
    model.eval()
    preds, truth = [], []
    for batch in data.batches(options.batch_size, blank_views=options.blank_views):
        with autocast(device, options.bf16):
            preds += model(batch).argmax(dim=1).tolist()
        truth += batch["answer"].tolist()
    return preds, truth


def accuracy(preds: list[int], truth: list[int]) -> float:
    return sum(p == t for p, t in zip(preds, truth)) / len(truth) if truth else float("nan")


def predictions_csv(ids: list[str], preds: list[int]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["question_id", "answer"])
    writer.writerows(zip(ids, preds))
    return buf.getvalue()


def _record(options: TrainOptions) -> dict:
    return {k: v.value if hasattr(v, "value") else v for k, v in dataclasses.asdict(options).items()}


def train(out: str | Path, task: TaskName | str, options: TrainOptions, *, dest: str | Path | None = None,
          progress: bool = True, data: dict[str, Resident] | None = None) -> dict:
    """Train, write predictions, curve, history and weights; returns the history (with the test report).

    ``data``: the splits from :func:`load_splits` with the same size and channels, to share one decoding."""

    out, task = Path(out), multiple_choice_task(task, "train-baseline trains")
    options.check()
    options = options.resolved(task)
    dest = Path(dest) if dest else out / BASELINES_DIR / task.value
    device = pick_device(options.device)
    torch.manual_seed(derive_seed(options.seed, "baseline", task.value, "init"))
    started = time.perf_counter()
    data = data or load_splits(out, task, options, device)
    decode_seconds = time.perf_counter() - started
    if len(data["train"]) == 0:
        raise ValueError(f"{out}: {task.value} has no train questions")
    shuffle = torch.Generator().manual_seed(derive_seed(options.seed, "baseline", task.value, "shuffle"))
    model = task_model(out, task, options).to(device)
    if device.type == "cuda":  # convolutions run fastest in NHWC on tensor cores
        torch.backends.cudnn.benchmark = True
        model = model.to(memory_format=torch.channels_last)
    optimiser = torch.optim.Adam(model.parameters(), lr=options.lr)

    steps_per_epoch = -(-len(data["train"]) // options.batch_size)
    total = options.epochs * steps_per_epoch
    if options.max_steps:
        total = min(total, options.max_steps)
    history: dict = {"task": task.value, "options": _record(options), "device": device_name(device),
                     "n": {s: len(d) for s, d in data.items()}, "decode_seconds": decode_seconds,
                     "step_loss": [], "epoch_steps": [], "epoch_loss": [], "train_accuracy": [],
                     "val_accuracy": [], "test_accuracy": [], "train_seconds": 0.0}
    best_state, best_val, best_epoch = copy.deepcopy(model.state_dict()), -1.0, 0
    bar = console.progress(total, f"train {task.value} {options.arch.value}", "step", enabled=progress)
    step, seen_total = 0, 0
    for epoch in range(options.epochs):
        model.train()
        losses, correct, seen = [], 0, 0
        tick = time.perf_counter()
        order = torch.randperm(len(data["train"]), generator=shuffle)
        for batch in data["train"].batches(options.batch_size, order, options.blank_views):
            if step >= total:
                break
            with autocast(device, options.bf16):
                logits = model(batch)
            loss = loss_of(options.formulation, logits.float(), batch["answer"])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
            losses.append(loss.item())
            correct += int((logits.argmax(dim=1) == batch["answer"]).sum())
            seen += len(batch["answer"])
            bar.update(1)
            bar.set_postfix(epoch=epoch + 1, loss=f"{losses[-1]:.3f}")
        history["train_seconds"] += time.perf_counter() - tick
        seen_total += seen
        if not losses:
            break
        val_acc, test_acc = (accuracy(*predict(model, data[s], options, device))
                             for s in ("val", "test"))
        history["step_loss"] += losses
        history["epoch_steps"].append(step)
        history["epoch_loss"].append(sum(losses) / len(losses))
        history["train_accuracy"].append(correct / seen)
        history["val_accuracy"].append(val_acc)
        history["test_accuracy"].append(test_acc)
        if not val_acc <= best_val:  # the first epoch, any better one; NaN (no val questions) keeps the latest
            best_state, best_val, best_epoch = copy.deepcopy(model.state_dict()), val_acc, epoch + 1
    bar.close()
    history["samples_per_second"] = seen_total / history["train_seconds"] if history["train_seconds"] else 0.0
    model.load_state_dict(best_state)
    history["best_epoch"] = best_epoch

    preds, _ = predict(model, data["test"], options, device)
    pred_path = write_text(dest / PREDICTIONS_NAME, predictions_csv(data["test"].ids, preds))
    report = evaluate(out, task, "test", pred_path)
    history["test"] = {k: report[k] for k in ("n_questions", "overall", "by_primitives", "chance")}
    chance = report["chance"]
    title = (f"{task.value}, {options.formulation.value}, {describe(options.arch)}"
             f"{', views blank' if options.blank_views else ''}: best epoch {best_epoch}, "
             f"test {report['overall']['accuracy']:.3f}")
    for suffix, data in curve_files(history["step_loss"], history["epoch_steps"], history["train_accuracy"],
                                    history["val_accuracy"], chance, title, history["test_accuracy"]).items():
        write_bytes((dest / CURVE_NAME).with_suffix(suffix), data)  # curve.png, and .svg and .pdf for papers
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    write_bytes(dest / WEIGHTS_NAME, buf.getvalue())
    write_json(dest / HISTORY_NAME, history)
    history["report_text"] = format_report(report)
    history["dest"] = str(dest)
    return history


def describe(arch: Arch) -> str:
    return {Arch.SMALL: "small CNN", Arch.VGG16: "VGG-16", Arch.RESNET50: "ResNet-50",
            Arch.BAGNET33: "BagNet-33"}[arch]


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def main(out: Path, task: str, options: TrainOptions, dest: Path | None = None, progress: bool = True) -> int:
    history = train(out, task, options, dest=dest, progress=progress)
    print(history["report_text"])
    print(f"spare-gen: baseline written to {history['dest']} ({PREDICTIONS_NAME}, {CURVE_NAME}, {HISTORY_NAME}, "
          f"{WEIGHTS_NAME}); {history['samples_per_second']:.3g} questions/s on {history['device']}")
    return 0
