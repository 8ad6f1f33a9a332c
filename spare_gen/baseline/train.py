"""``spare-gen train-baseline``: train a baseline on a task's train split, pick the best epoch on val, predict test.

The networks are SPARE3D's (``nets``: VGG-16, ResNet-50, BagNet-33 in the binary, metric-learning or multi-class
formulation of the supplementary) or the small CNN, with the recipe's learning rate, batch size and epochs
(``options``). Each split is read once from the training feed (``spare_gen.data.feed``: uint8, F, R, T once per
question, its decoded cache reused across runs) into uint8 tensors on the training device (GPU memory when there is
one), so an epoch costs indexing, not PNG decoding; images become float in [0, 1] only there.

``out`` is a dataset folder or a folder of exported caches (``spare-gen cache --export``: one self-describing file
per split, trained from with no PNG and no dataset). ``--protocol spare3d`` evaluates as ai4ce/SPARE3D's trainers do
(see ``spare3d_glob_swaps`` and ``spare_gen.baseline.figure6.cell_of``).

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
import os
import sys
import time
from pathlib import Path
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader

from spare_gen import console
from spare_gen.atomic import write_bytes, write_json, write_text
from spare_gen.baseline.curve import curve_files
from spare_gen.baseline.nets import make_model
from spare_gen.baseline.options import (HYPOTHESES_WEIGHT_DECAY, MARGIN, Arch, Formulation, Protocol, TrainOptions,
                                        chooses_poses)
from spare_gen.baseline.pose_net import CandidateHypotheses, PoseHypotheses
from spare_gen.config.tasks.isometric_to_pose import POSE_CHOICE_SETS, PoseChoices
from spare_gen.config.schema import TaskName
from spare_gen.data.evaluate import AnswerKey, format_report, multiple_choice_task, score
from spare_gen.data.feed import N_VIEWS, collate, open_feed
from spare_gen.data.human import human_reference
from spare_gen.data.stats import CONFIDENCE
from spare_gen.stages.questions.tasks import TASK_SPECS
from spare_gen.rng import derive_rng, derive_seed

BASELINES_DIR = "baselines"
PREDICTIONS_NAME = "predictions_test.csv"
CURVE_NAME = "curve.png"
HISTORY_NAME = "history.json"
WEIGHTS_NAME = "model.pt"
IMAGE_KEYS = ("views", "candidates", "drawing")
MODEL_KEYS = (*IMAGE_KEYS, "pose", "answer")  # what a batch hands a model and its loss
DECODE_BATCH = 64
ESTIMATE_AFTER = 3  # steps after the first (its warm-up set apart) that time the estimate of an epoch
BLANK = 255  # a blank drawing is paper with no ink: white in every channel
# ai4ce/SPARE3D Code/Isometric_to_pose/Dataloader.py reads R as glob.glob(folder + "/*r.png")[0]. In a question folder
# (<q>_f.png, <q>_r.png, <q>_t.png, answer.png) that pattern matches <q>_r.png and answer.png, and glob lists them in
# the directory's own order (os.scandir: on ext4 the order of a hash of the name under the file system's random
# seed), so which one is first is a coin per folder, fixed on one copy of the data. *f.png and *t.png match one file.
SPARE3D_GLOB_SHARE = 0.5  # the coin's odds: two names, an order no rule favours ("about half" of the folders)
SPARE3D_GLOB_SEED = 0  # the coins are the dataset copy's, not the run's: the same folders swap under every seed
R_SLOT = slice(3, 6)  # the R view's channels in ``views`` (F, R, T)


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


def spare3d_glob_swaps(question_ids: list[str]) -> list[bool]:
    """Per question: whether SPARE3D's isometric-to-pose loader would read answer.png (the isometric drawing) as R."""
    return [bool(derive_rng(SPARE3D_GLOB_SEED, "spare3d_glob", q).random() < SPARE3D_GLOB_SHARE) for q in question_ids]


class Resident:
    """One split of the feed (a ``spare_gen.data.feed.FeedDataset``) as uint8 tensors on ``device``; batches are
    index gathers, floats made there. ``spare3d_glob``: the isometric drawing in the R slot where SPARE3D's loader
    would put it (``spare3d_glob_swaps``; tasks with an extra drawing only)."""

    def __init__(self, dataset, device: torch.device, *, workers: int = 0, spare3d_glob: bool = False):
        parts: dict[str, list[torch.Tensor]] = {}
        self.ids: list[str] = []
        exported = getattr(dataset, "source", None) is not None  # in memory already: no worker processes
        for batch in DataLoader(dataset, batch_size=DECODE_BATCH, num_workers=0 if exported else workers,
                                collate_fn=collate):
            self.ids += batch["question_id"]
            for key in MODEL_KEYS:
                if key in batch:
                    parts.setdefault(key, []).append(batch[key])
        self.n_primitives = [None if n < 0 else int(n) for n in dataset.n_primitives]
        self.tables = [getattr(dataset, "table_sha256", None)]  # the question table(s) the questions come from
        self.n_choices = dataset.n_choices
        self.choice_poses = choice_poses_of(dataset.dataset_record())
        self.swapped = spare3d_glob_swaps(self.ids) if spare3d_glob and "drawing" in parts else [False] * len(self.ids)
        if any(self.swapped):
            views, drawing = torch.cat(parts["views"]), torch.cat(parts["drawing"])
            views[torch.tensor(self.swapped), R_SLOT] = drawing[torch.tensor(self.swapped), :N_VIEWS]
            parts["views"] = [views]
        self.tensors = {k: torch.cat(v).to(device) for k, v in parts.items()}

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, index: list[int]) -> "Resident":
        """The questions at ``index`` (in that order), sharing nothing mutable with this split."""
        return self.joined([self], [index])

    @classmethod
    def joined(cls, parts: list["Resident"], indices: list[list[int]] | None = None) -> "Resident":
        """One split of ``parts``' questions one after another (each part's ``indices`` only, when given)."""
        indices = indices or [list(range(len(p))) for p in parts]
        out = cls.__new__(cls)
        out.ids = [p.ids[i] for p, idx in zip(parts, indices) for i in idx]
        out.n_primitives = [p.n_primitives[i] for p, idx in zip(parts, indices) for i in idx]
        out.swapped = [p.swapped[i] for p, idx in zip(parts, indices) for i in idx]
        out.n_choices, out.choice_poses = parts[0].n_choices, parts[0].choice_poses
        out.tables = [t for p in parts for t in p.tables]
        out.tensors = {k: torch.cat([p.tensors[k].index_select(0, torch.tensor(idx, dtype=torch.long,
                                                                               device=p.tensors[k].device))
                                     for p, idx in zip(parts, indices)]) for k in parts[0].tensors}
        return out

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


def choice_poses_of(record: dict) -> tuple[int, ...] | None:
    """The isometric-to-pose choice poses a dataset record names (``pose_choices``), in answer order; the default
    set for datasets made before the setting existed."""
    name = record.get("pose_choices") or PoseChoices.UPPER.value
    return POSE_CHOICE_SETS[PoseChoices(name)]


def cpu_threads(threads: int) -> int:
    """Torch's intra-op threads for CPU training: ``threads``, or the cores this process may run on."""
    return threads if threads > 0 else len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


def load_splits(out: Path, task: TaskName, options: TrainOptions, device: torch.device) -> dict[str, Resident]:
    """The train, val and test splits at the options' size and channel order, on ``device``: from a dataset folder
    (each decoded once into the feed's cache, which later runs reuse) or a folder of exported caches."""
    return {s: Resident(open_feed(out, task, s, size=options.size, channels=options.channels,
                                  questions=options.questions), device, workers=options.workers,
                        spare3d_glob=options.protocol is Protocol.SPARE3D) for s in ("train", "val", "test")}


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


def task_model(task: TaskName, options: TrainOptions, n_choices: int,
               choice_poses: tuple[int, ...] | None = None) -> nn.Module:
    """The head the task's spec asks for (the query pose joins the candidates' features when the task has one), over
    as many choices as the dataset's questions offer; ``--arch hypotheses`` over the dataset's ``choice_poses``."""
    if options.arch is Arch.HYPOTHESES:
        if chooses_poses(task):
            return PoseHypotheses(choice_poses or POSE_CHOICE_SETS[PoseChoices.UPPER])
        spec = TASK_SPECS[task]
        return CandidateHypotheses(None if spec.loader.pose is not None else spec.candidate_pose)
    return make_model(options.formulation, options.arch, with_pose=TASK_SPECS[task].loader.pose is not None,
                      n_choices=n_choices)


def report_on_test(task: TaskName, data: Resident, preds: list[int], predictions: Path) -> dict:
    """``spare-gen evaluate``'s report of ``preds`` on the test split, scored from the split in memory (a folder of
    exported caches has no question table to read)."""
    answers = data.tensors["answer"].tolist()
    rows = [AnswerKey(q, n, a) for q, n, a in zip(data.ids, data.n_primitives, answers)]
    human = human_reference(task)
    return {"task": task.value, "split": "test", "predictions": str(predictions), "n_questions": len(rows),
            "confidence": CONFIDENCE, **score(rows, dict(zip(data.ids, preds)), data.n_choices),
            "human": human.to_dict() if human else None}


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
          progress: bool = True, data: dict[str, Resident] | None = None,
          on_epoch: Callable[[dict], None] | None = None, deadline: float | None = None) -> dict:
    """Train, write predictions, curve, history and weights; returns the history (with the test report).

    ``data``: the splits from :func:`load_splits` with the same size, channels, questions and protocol, to share one
    decoding. ``on_epoch(history)`` runs after each epoch. ``deadline`` (``time.monotonic()`` seconds): no epoch
    starts that the last one's duration says would end after it (``history["stopped"]`` then says so)."""

    out, task = Path(out), multiple_choice_task(task, "train-baseline trains")
    options.check()
    options = options.resolved(task)
    dest = Path(dest) if dest else out / BASELINES_DIR / task.value
    device = pick_device(options.device)
    if device.type == "cpu":
        torch.set_num_threads(cpu_threads(options.threads))
    torch.manual_seed(derive_seed(options.seed, "baseline", task.value, "init"))
    started = time.perf_counter()
    data = data or load_splits(out, task, options, device)
    if len(data["train"]) == 0:
        raise ValueError(f"{out}: {task.value} has no train questions")
    history = _new_history(task, options, device, data, decode_seconds=time.perf_counter() - started)
    model = _model_on(device, task_model(task, options, data["train"].n_choices, data["train"].choice_poses))
    _fit(model, data, options, device, history, progress, on_epoch, deadline)
    return _write_results(model, task, data, options, device, dest, history)


def _new_history(task: TaskName, options: TrainOptions, device: torch.device, data: dict[str, Resident],
                 decode_seconds: float) -> dict:
    """The training record, filled epoch by epoch (``history.json``)."""
    return {"task": task.value, "options": _record(options), "device": device_name(device),
            "n": {s: len(d) for s, d in data.items()}, "decode_seconds": decode_seconds,
            "step_loss": [], "epoch_steps": [], "epoch_loss": [], "train_accuracy": [],
            "val_accuracy": [], "test_accuracy": [], "train_seconds": 0.0, "epoch_seconds": [],
            "stopped": None}


def _model_on(device: torch.device, model: nn.Module) -> nn.Module:
    model = model.to(device)
    if device.type == "cuda":  # convolutions run fastest in NHWC on tensor cores
        torch.backends.cudnn.benchmark = True
        model = model.to(memory_format=torch.channels_last)
    return model


def _fit(model: nn.Module, data: dict[str, Resident], options: TrainOptions, device: torch.device, history: dict,
         progress: bool, on_epoch: Callable[[dict], None] | None, deadline: float | None) -> None:
    """The epochs: train, score val and test, keep the best-val weights (loaded into ``model`` at the end)."""
    task = history["task"]
    shuffle = torch.Generator().manual_seed(derive_seed(options.seed, "baseline", task, "shuffle"))
    total = options.epochs * -(-len(data["train"]) // options.batch_size)
    if options.max_steps:
        total = min(total, options.max_steps)
    optimiser, schedule = optimiser_for(model, options, total)
    best_state, best_val, best_epoch = copy.deepcopy(model.state_dict()), -1.0, 0
    bar = console.progress(total, f"train {task} {options.arch.value}", "step", enabled=progress)
    step, seen_total = 0, 0
    _stoppable(model)
    for epoch in range(options.epochs):
        if deadline is not None and history["epoch_seconds"] and \
                time.monotonic() + history["epoch_seconds"][-1] > deadline:
            history["stopped"] = f"time budget: {epoch} of {options.epochs} epochs"
            break
        tick = time.perf_counter()
        order = torch.randperm(len(data["train"]), generator=shuffle)
        losses, correct, seen, step = _train_epoch(model, optimiser, schedule, data["train"], order, options,
                                                   device, bar, epoch, step, total)
        history["train_seconds"] += time.perf_counter() - tick
        seen_total += seen
        if not losses:
            break
        val_acc, test_acc = (accuracy(*predict(model, data[s], options, device)) for s in ("val", "test"))
        _record_epoch(history, losses, step, correct / seen, val_acc, test_acc)
        if not val_acc <= best_val:  # the first epoch, any better one; NaN (no val questions) keeps the latest
            best_state, best_val, best_epoch = copy.deepcopy(model.state_dict()), val_acc, epoch + 1
        history["epoch_seconds"].append(time.perf_counter() - tick)
        if on_epoch is not None:
            on_epoch(history)
    bar.close()
    history["samples_per_second"] = seen_total / history["train_seconds"] if history["train_seconds"] else 0.0
    model.load_state_dict(best_state)
    history["best_epoch"] = best_epoch


def optimiser_for(model: nn.Module, options: TrainOptions, total_steps: int):
    """(optimiser, schedule or None): Adam at the recipe's rate, as SPARE3D's trainers; ``hypotheses``: AdamW with a
    one-cycle schedule over the run's steps."""
    if options.arch is Arch.HYPOTHESES:
        optimiser = torch.optim.AdamW(model.parameters(), lr=options.lr, weight_decay=HYPOTHESES_WEIGHT_DECAY)
        return optimiser, torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=options.lr,
                                                              total_steps=max(total_steps, 1))
    return torch.optim.Adam(model.parameters(), lr=options.lr), None


def _stoppable(model: nn.Module) -> None:
    """A no-op hook on every parameter's gradient, so that a Ctrl-C lands inside a backward pass (Python runs between
    two layers' gradients) instead of after it: one VGG-16 step on a CPU takes minutes."""
    for p in model.parameters():
        if p.requires_grad:
            p.register_hook(lambda grad: None)


def _train_epoch(model: nn.Module, optimiser: torch.optim.Optimizer, schedule, train: Resident, order: torch.Tensor,
                 options: TrainOptions, device: torch.device, bar, epoch: int, step: int, total: int
                 ) -> tuple[list[float], int, int, int]:
    """One pass over the train split in ``order``, stopping at ``total`` steps: (losses, correct, seen, step)."""
    model.train()
    losses, correct, seen = [], 0, 0
    timed_from = None
    for batch in train.batches(options.batch_size, order, options.blank_views):
        if step >= total:
            break
        with autocast(device, options.bf16):
            logits = model(batch)
        loss = loss_of(options.formulation, logits.float(), batch["answer"])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if schedule is not None and step + 1 < total:
            schedule.step()
        step += 1
        losses.append(loss.item())
        correct += int((logits.argmax(dim=1) == batch["answer"]).sum())
        seen += len(batch["answer"])
        bar.update(1)
        bar.set_postfix(epoch=epoch + 1, loss=f"{losses[-1]:.3f}")
        if epoch == 0 and len(losses) == 1:
            timed_from = time.perf_counter()  # the first step's warm-up is not a typical step
        elif epoch == 0 and len(losses) == 1 + ESTIMATE_AFTER and getattr(bar, "enabled", True):
            _say_estimate(bar, (time.perf_counter() - timed_from) / ESTIMATE_AFTER,
                          -(-len(train) // options.batch_size), total)
    return losses, correct, seen, step


def _duration(seconds: float) -> str:
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else \
        f"{seconds / 3600:.1f} h"


def _say_estimate(bar, step_s: float, epoch_steps: int, total: int) -> None:
    """One line, after the first steps: the time a step takes, an epoch's and the whole run's training."""
    line = (f"spare-gen: {bar.desc}: about {_duration(step_s)} a step: an epoch ({epoch_steps} steps) about "
            f"{_duration(step_s * epoch_steps)}, all {total} steps about {_duration(step_s * total)}, plus scoring "
            f"val and test after each epoch (Ctrl-C stops it)")
    bar.write(line, file=sys.stderr)  # on a terminal above the bar, which stays whole


def _record_epoch(history: dict, losses: list[float], step: int, train_acc: float, val_acc: float,
                  test_acc: float) -> None:
    history["step_loss"] += losses
    history["epoch_steps"].append(step)
    history["epoch_loss"].append(sum(losses) / len(losses))
    history["train_accuracy"].append(train_acc)
    history["val_accuracy"].append(val_acc)
    history["test_accuracy"].append(test_acc)


def _write_results(model: nn.Module, task: TaskName, data: dict[str, Resident], options: TrainOptions,
                   device: torch.device, dest: Path, history: dict) -> dict:
    """The best weights' test predictions and report, the curve, the weights and ``history.json``."""
    preds, _ = predict(model, data["test"], options, device)
    pred_path = write_text(dest / PREDICTIONS_NAME, predictions_csv(data["test"].ids, preds))
    report = report_on_test(task, data["test"], preds, pred_path)
    history["test"] = {k: report[k] for k in ("n_questions", "overall", "by_primitives", "chance")}
    history["spare3d_glob_swaps"] = {s: sum(d.swapped) for s, d in data.items()}
    title = (f"{task.value}, {options.formulation.value}, {describe(options.arch)}"
             f"{', views blank' if options.blank_views else ''}: best epoch {history['best_epoch']}, "
             f"test {report['overall']['accuracy']:.3f}")
    for suffix, content in curve_files(history["step_loss"], history["epoch_steps"], history["train_accuracy"],
                                       history["val_accuracy"], report["chance"], title,
                                       history["test_accuracy"]).items():
        write_bytes((dest / CURVE_NAME).with_suffix(suffix), content)  # curve.png, and .svg and .pdf for papers
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    write_bytes(dest / WEIGHTS_NAME, buf.getvalue())
    write_json(dest / HISTORY_NAME, history)
    history["report_text"] = format_report(report)
    history["dest"] = str(dest)
    return history


def describe(arch: Arch) -> str:
    return {Arch.SMALL: "small CNN", Arch.HYPOTHESES: "pose hypotheses", Arch.VGG16: "VGG-16",
            Arch.RESNET50: "ResNet-50", Arch.BAGNET33: "BagNet-33"}[arch]


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def main(out: Path, task: str, options: TrainOptions, dest: Path | None = None, progress: bool = True) -> int:
    history = train(out, task, options, dest=dest, progress=progress)
    print(history["report_text"])
    curves = f"{CURVE_NAME} (and its .svg and .pdf)"
    print(f"spare-gen: baseline written to {history['dest']} ({PREDICTIONS_NAME}, {curves}, {HISTORY_NAME}, "
          f"{WEIGHTS_NAME}); {history['samples_per_second']:.3g} questions/s on {history['device']}")
    return 0
