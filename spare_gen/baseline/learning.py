"""``spare-gen learning-curve``: accuracy against training-set size, for a network, its blank-views twin and the
audit's view-aware probe, on the same held-out questions. It answers "how many questions does my dataset need?".

Protocol, the same for every size and learner:

* the held-out set is val and test together (every question of those splits; at paper scale 1,000, enough to
  resolve a few points), and each training set is the first N questions of one seeded order of the train split, so
  the sets are nested. A model keeps its split in every task (``questions.model_reuse``), so no model is on both
  sides: :func:`models_on_both_sides` checks it from the question ids' model part on every run;
* the network trains a fixed number of epochs (the recipe's) with no choice of epoch, so nothing is selected on the
  held-out questions; its blank twin is the same recipe with F, R and T as blank paper;
* the probe is the audit's (``spare_gen.audit.learnability``: its 29 features per drawing and its
  HistGradientBoostingClassifier) fitted on the same N questions, with the views and without them (blind);
* each accuracy has its Wilson 95 % interval, and views minus blank its paired normal interval over the same
  held-out questions.

Writes ``learning_curve.json``, ``learning_curve.md`` and ``learning_curve.png`` (``.svg``, ``.pdf`` beside it) to
``--dest`` (default ``SOURCE/baselines/learning/TASK``), each network's run in a folder of its own beside them, and
with ``--record FILE`` the results with their provenance (dataset, commit, recipe, CPU seconds), as
``benchmarks/learning/*.json`` keeps them. Each finished run leaves ``RUN_RECORD`` beside its predictions (the hash of
its options and of the questions it trained and was scored on, its CPU seconds): a later curve reuses it when that
hash is the same, so a curve stopped part way resumes, and a rerun trains nothing.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import subprocess
import time
from pathlib import Path

import numpy as np
import torch

from spare_gen.atomic import write_bytes, write_json, write_text
from spare_gen.audit.learnability import BLIND, FEATURE_NAMES, VIEWS, TaskInputs, design, fit_predict, \
    image_features, paired_difference
from spare_gen.baseline.options import TrainOptions, chooses_poses
from spare_gen.baseline.train import PREDICTIONS_NAME, Resident, cpu_threads, load_splits, pick_device, train
from spare_gen.config.schema import TaskName
from spare_gen.data.evaluate import multiple_choice_task
from spare_gen.data.stats import CONFIDENCE, wilson
from spare_gen.rng import derive_rng, derive_seed

DEFAULT_SIZES = (250, 500, 1000, 2000, 4000)
LEARNING_DIR = "learning"
RUN_RECORD = "learning_run.json"  # beside each finished run of a curve: its key, CPU seconds and epoch history
NAME = "learning_curve"
NETWORK, BLANK = "network", "blank"
LEARNERS = (NETWORK, BLANK, f"probe_{VIEWS}", f"probe_{BLIND}")


def say(line: str) -> None:
    print(f"spare-gen: learning-curve: {line}", flush=True)


def ties_without_views(options: TrainOptions, task: TaskName, choice_poses: tuple[int, ...] | None) -> bool:
    """Whether the network's blank-views twin gives every choice the same input, so the same score whatever its
    weights (``--arch hypotheses`` where no choice turns the drawing: the upper poses). Its curve then trains one
    step, not the recipe's epochs: its answers are the first choice either way (chance), at a 1/epochs of the CPU."""
    from spare_gen.baseline.options import Arch
    from spare_gen.baseline.pose_hypotheses import hypotheses

    return options.arch is Arch.HYPOTHESES and chooses_poses(task) and choice_poses is not None and all(
        h.t == ((1.0, 0.0), (0.0, 1.0)) for h in hypotheses(tuple(choice_poses)))


def split_models(source: Path, task: TaskName, split: str) -> list[str] | None:
    """Each question's model id, in split order, from a dataset folder's question table (None for a folder of
    exported caches, which carry no model ids: their dataset guarantees the split by model)."""
    if not (source / "dataset.json").is_file():
        return None
    from spare_gen.data.tables import load_rows

    return [r.model_id for r in load_rows(source, task, split, ["model_id"])]


def models_on_both_sides(train_models: list[str], held_models: list[str]) -> set[str]:
    """Models with questions on both sides (empty when the split is clean)."""
    return set(train_models) & set(held_models)


def _images(t: torch.Tensor) -> list:
    from PIL import Image

    return [Image.fromarray(np.ascontiguousarray(a.permute(1, 2, 0).cpu().numpy())) for a in t]


def probe_inputs(task: TaskName, data: Resident) -> TaskInputs:
    """The audit probe's features of every question of ``data`` (from its uint8 RGB images: the numbers its PNGs
    decode to), as ``spare_gen.audit.learnability.read_inputs`` gives them."""
    t = data.tensors
    d = len(FEATURE_NAMES)
    views = t["views"].reshape(len(data), 3, 3, *t["views"].shape[-2:])
    view_features = np.array([[image_features(im) for im in _images(q)] for q in views]).reshape(len(data), 3, d)
    if "candidates" in t:
        choices = np.array([[image_features(im) for im in _images(q)] for q in t["candidates"]]).reshape(
            len(data), -1, d)
    else:
        choices = np.array([image_features(im) for im in _images(t["drawing"])]).reshape(len(data), 1, d)
    pose = t["pose"].argmax(dim=1).cpu().numpy().astype(np.float64) if "pose" in t else None
    return TaskInputs(task, view_features, choices, t["answer"].cpu().numpy(), np.array(data.ids, dtype=object),
                      pose, data.n_choices, len(data))


def _subset_inputs(inputs: TaskInputs, index: np.ndarray) -> TaskInputs:
    return dataclasses.replace(inputs, views=inputs.views[index], choices=inputs.choices[index],
                               answers=inputs.answers[index], groups=inputs.groups[index],
                               pose=None if inputs.pose is None else inputs.pose[index], available=len(index))


def run_key(options: TrainOptions, train_split: Resident, held: Resident) -> str:
    """What decides a run's answers, hashed: its options, the questions it trained on and those it was scored on (ids
    in order) and the tables they come from. A finished run with the same key is reused by a later curve."""
    payload = {"options": {k: getattr(v, "value", v) for k, v in dataclasses.asdict(options).items()},
               "train": train_split.ids, "held": held.ids, "tables": [*train_split.tables, *held.tables]}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def finished_run(folder: Path, key: str) -> dict | None:
    """``folder``'s record (``RUN_RECORD``: key, CPU seconds, history) when it finished with this ``key`` and its
    predictions are there; None otherwise (the run is trained again)."""
    try:
        record = json.loads((folder / RUN_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if record.get("key") == key and (folder / PREDICTIONS_NAME).is_file() else None


def _is_record(path: Path) -> bool:
    try:
        return "key" in json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def _accuracy(correct: np.ndarray) -> dict:
    a = wilson(int(correct.sum()), len(correct), CONFIDENCE)
    return {"correct": a.correct, "total": a.total, "accuracy": a.value, "ci95": [a.low, a.high]}


def _predictions(path: Path, ids: list[str]) -> np.ndarray:
    with open(path, newline="", encoding="utf-8") as fh:
        got = {row["question_id"]: int(row["answer"]) for row in csv.DictReader(fh)}
    return np.array([got[q] for q in ids])


def git_commit() -> str | None:
    """The checkout's commit (with ``+dirty`` when it has changes), or None outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def learning_curve(source: str | Path, task: TaskName | str, options: TrainOptions, *,
                   sizes: tuple[int, ...] = DEFAULT_SIZES, dest: str | Path | None = None, blank: bool = True,
                   probe: bool = True, progress: bool = True) -> dict:
    """Train and score every learner at every size (see the module docstring); returns the result written."""
    source, task = Path(source), multiple_choice_task(task, "learning-curve trains")
    options = options.resolved(task)
    dest = Path(dest) if dest else source / "baselines" / LEARNING_DIR / task.value
    device = pick_device(options.device)
    if device.type == "cpu":
        torch.set_num_threads(cpu_threads(options.threads))
    started = time.perf_counter()
    data = load_splits(source, task, options, device)
    held = Resident.joined([data["val"], data["test"]])
    if len(held) == 0:
        raise ValueError(f"{source}: {task.value} has no val or test questions to score on")
    models = {s: split_models(source, task, s) for s in ("train", "val", "test")}
    shared = set() if models["train"] is None else models_on_both_sides(
        models["train"], models["val"] + models["test"])  # type: ignore[operator]
    if shared:
        raise ValueError(f"{source}: {len(shared)} model(s) have questions in train and in val/test "
                         f"(e.g. {sorted(shared)[0]}): a learning curve needs disjoint models")
    order = derive_rng(options.seed, "learning", task.value, "order").permutation(len(data["train"]))
    usable = [n for n in sizes if n <= len(data["train"])]
    for n in sorted(set(sizes) - set(usable)):
        say(f"size {n} left out: the train split has {len(data['train'])} questions")
    if not usable:
        raise ValueError(f"--sizes: every size is above the {len(data['train'])} train questions")
    empty = data["train"].subset([])
    answers = held.tensors["answer"].cpu().numpy()
    features = None
    if probe:
        tick = time.process_time()
        features = (probe_inputs(task, data["train"]), probe_inputs(task, held))
        say(f"probe features of {len(data['train']) + len(held)} questions "
                    f"({time.process_time() - tick:.0f} CPU s)")
    points = []
    for n in usable:
        sub = data["train"].subset(order[:n].tolist())
        point: dict = {"n_train": n, "n_held_out": len(held)}
        correct: dict[str, np.ndarray] = {}
        for name, blank_views in ((NETWORK, False), (BLANK, True))[:2 if blank else 1]:
            run_options = dataclasses.replace(options, blank_views=blank_views)
            if blank_views and ties_without_views(options, task, data["train"].choice_poses):
                run_options = dataclasses.replace(run_options, max_steps=1)  # training cannot change its answers
            folder, key = dest / f"{options.arch.value}-{name}-n{n}", run_key(run_options, sub, held)
            record = finished_run(folder, key)
            reused = record is not None
            if record is None:
                if (folder / RUN_RECORD).is_file() and _is_record(folder / RUN_RECORD):
                    (folder / RUN_RECORD).unlink()  # another run's record: never left beside this run's files
                tick = time.process_time()
                history = train(source, task, run_options, dest=folder, progress=progress,
                                data={"train": sub, "val": empty, "test": held})
                record = {"key": key, "cpu_seconds": time.process_time() - tick, "history": {
                    k: history[k] for k in ("epoch_steps", "epoch_loss", "test_accuracy")}}
                write_json(folder / RUN_RECORD, record)  # last: a run stopped before this is trained again
            history = record["history"]
            pred = _predictions(folder / PREDICTIONS_NAME, held.ids)
            correct[name] = pred == answers
            point[name] = {**_accuracy(correct[name]), "cpu_seconds": record["cpu_seconds"],
                           "steps": history["epoch_steps"][-1] if history["epoch_steps"] else 0,
                           "epochs": len(history["epoch_loss"]), "epoch_test_accuracy": history["test_accuracy"]}
            say(f"{task.value} n={n} {name}: {100 * point[name]['accuracy']:.1f} % of {len(held)} held-out questions "
                f"({point[name]['cpu_seconds']:.0f} CPU s{'; reused: trained earlier in ' + str(folder) if reused else ''})")
        if blank:
            point["network_minus_blank"] = paired_difference(correct[NETWORK], correct[BLANK])
        if features is not None:
            train_in, held_in = _subset_inputs(features[0], order[:n]), features[1]
            seed = derive_seed(options.seed, "learning", task.value, "probe") % (2 ** 31)
            for name in (VIEWS, BLIND):
                pred = fit_predict(design(train_in, name == VIEWS), train_in.answers, design(held_in, name == VIEWS),
                                   held_in.n_choices, seed)
                correct[f"probe_{name}"] = pred == answers
                point[f"probe_{name}"] = _accuracy(correct[f"probe_{name}"])
            say(f"{task.value} n={n} probe: views "
                        f"{100 * point['probe_views']['accuracy']:.1f} %, blind "
                        f"{100 * point['probe_blind']['accuracy']:.1f} %")
        points.append(point)
    result = {"task": task.value, "models_disjoint": "checked" if models["train"] is not None else
              "by the dataset's split rule (exported caches carry no model ids)", "source": str(source), "dataset": _dataset(data["train"], source),
              "options": {k: getattr(v, "value", v) for k, v in dataclasses.asdict(options).items()},
              "choice_poses": list(data["train"].choice_poses or []) if chooses_poses(task) else [],
              "blank_twin": ("trained one step: every choice gets the same input, so the same score whatever the "
                             "weights (chance by construction)" if ties_without_views(options, task,
                                                                                     data["train"].choice_poses)
                             else "trained with the network's recipe"), "chance": 1.0 / max(held.n_choices, 1),
              "n": {s: len(d) for s, d in data.items()}, "held_out": "val+test", "confidence": CONFIDENCE,
              "order_seed": ["learning", task.value, "order", options.seed], "points": points,
              "commit": git_commit(), "torch": torch.__version__, "threads": torch.get_num_threads(),
              "wall_seconds": time.perf_counter() - started}
    write_outputs(dest, result)
    return result


def _dataset(train_split: Resident, source: Path) -> dict:
    """What names the data: the dataset folder's manifest hash, or an exported cache's header."""
    manifest = source / "dataset.json"
    if manifest.is_file():
        m = json.loads(manifest.read_text(encoding="utf-8"))
        return {"folder": str(source), "provenance_sha256": m.get("provenance_sha256"), "seed": m.get("seed"),
                "config": m.get("config")}
    from spare_gen.data.feed import exported_file
    from spare_gen.data.cachefile import read_header

    tables = {}
    dataset: dict = {}
    for split in ("train", "val", "test"):
        header = read_header(exported_file(source, train_split_task(source), split))
        tables[split] = header["table_sha256"]
        dataset = header["dataset"]
    return {"folder": str(source), "exported_caches": True, "table_sha256": tables,
            **{k: dataset.get(k) for k in ("name", "provenance_sha256", "seed", "pose_choices", "config")}}


def train_split_task(source: Path) -> str:
    """The task of a folder of exported caches (``TASK-SPLIT.sgcache.xz``; one task per folder)."""
    names = sorted(p.name.split("-")[0] for p in source.glob("*-train.sgcache.xz"))
    return names[0]


def markdown(result: dict) -> str:
    """The table: one row per size, each learner's accuracy with its interval, and views minus blank."""
    pct = lambda a: f"{100 * a['accuracy']:.1f} [{100 * a['ci95'][0]:.1f}, {100 * a['ci95'][1]:.1f}]"  # noqa: E731
    lines = [f"Accuracy (%) on {result['points'][0]['n_held_out']} held-out questions ({result['held_out']}) "
             f"against training questions; {result['options']['arch']} network, {result['options']['epochs']} "
             f"epochs, chance {100 * result['chance']:.0f} %. 95 % intervals: Wilson; difference: paired normal. "
             f"Blank twin: {result.get('blank_twin', 'trained with the network recipe')}.", "",
             "| train questions | network | blank views | network - blank | probe, views | probe, blind | "
             "network CPU s |", "|---|---|---|---|---|---|---|"]
    for p in result["points"]:
        diff = p.get("network_minus_blank")
        lines.append(
            f"| {p['n_train']:,} | {pct(p[NETWORK])} | {pct(p[BLANK]) if BLANK in p else '-'} | "
            + (f"{100 * diff['mean']:+.1f} [{100 * diff['ci95'][0]:+.1f}, {100 * diff['ci95'][1]:+.1f}]"
               if diff else "-")
            + f" | {pct(p['probe_views']) if 'probe_views' in p else '-'} | "
            f"{pct(p['probe_blind']) if 'probe_blind' in p else '-'} | {p[NETWORK]['cpu_seconds']:.0f} |")
    return "\n".join(lines) + "\n"


STYLES = {NETWORK: ("network, views", "#E69F00", "o", "-"), BLANK: ("network, blank views", "#E69F00", "o", "--"),
          "probe_views": ("audit probe, views", "#0072B2", "s", "-"),
          "probe_blind": ("audit probe, blind", "#0072B2", "s", "--")}


def chart_files(result: dict, title: str) -> dict[str, bytes]:
    """The curve: accuracy against training questions (log axis), each learner with its 95 % band, and chance."""
    from spare_gen import figures

    with figures.style():
        fig = figures.new_figure(6.4, 4.0)
        ax = fig.add_subplot()
        n = [p["n_train"] for p in result["points"]]
        for key, (label, colour, marker, line) in STYLES.items():
            if not all(key in p for p in result["points"]):
                continue
            acc = [100 * p[key]["accuracy"] for p in result["points"]]
            lo = [100 * p[key]["ci95"][0] for p in result["points"]]
            hi = [100 * p[key]["ci95"][1] for p in result["points"]]
            ax.plot(n, acc, marker=marker, linestyle=line, color=colour, label=label)
            ax.fill_between(n, lo, hi, color=colour, alpha=0.15, linewidth=0)
        ax.axhline(100 * result["chance"], color="#999999", linewidth=1, linestyle=":", label="chance")
        ax.set_xscale("log")
        ax.set_xticks(n, [f"{v:,}" for v in n])
        ax.minorticks_off()
        ax.set_ylim(0, 100)
        ax.set_xlabel("training questions")
        ax.set_ylabel(f"accuracy on {result['points'][0]['n_held_out']:,} held-out questions (%)")
        ax.set_title(title, fontsize=9)
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        return figures.render_all(fig)


def write_outputs(dest: Path, result: dict) -> None:
    write_json(dest / f"{NAME}.json", result)
    poses = result.get("choice_poses")
    title = (f"{result['task']}" + (f", poses {', '.join(map(str, poses))}" if poses else "")
             + f": {result['options']['arch']} network and the audit's probe")
    write_text(dest / f"{NAME}.md", f"# Learning curve: {title}\n\n{markdown(result)}")
    for suffix, content in chart_files(result, title).items():
        write_bytes(dest / f"{NAME}{suffix}", content)


def main(source: Path, task: str, options: TrainOptions, *, sizes: tuple[int, ...], dest: Path | None,
         blank: bool, probe: bool, record: Path | None, progress: bool) -> int:
    result = learning_curve(source, task, options, sizes=sizes, dest=dest, blank=blank, probe=probe,
                            progress=progress)
    if record is not None:
        write_json(record, result)
    out = Path(dest) if dest else Path(source) / "baselines" / LEARNING_DIR / result["task"]
    print(markdown(result), end="")
    print(f"spare-gen: learning-curve: {NAME}.json, .md, .png, .svg and .pdf in {out}"
          + (f"; record {record}" if record else ""))
    return 0
