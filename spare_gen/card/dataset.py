"""The dataset card ``<out>/README.md``: tasks, fields, counts, answer and primitive balance, rejections, config."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from spare_gen.store import shards
from spare_gen.config.schema import Config, ModelReuse, ModelSource, TaskName
from spare_gen.config.tasks import task_options
from spare_gen.stages.drawings.preset import drawing_rule
from spare_gen.hub.pack import HF_SPLIT, hf_path
from spare_gen.stages.models.quality import Quality
from spare_gen.stages.models.schema import MODELS_FILE, ModelRow
from spare_gen.stages.questions.select import split_ratio
from spare_gen.stages.questions.spec import TargetKind
from spare_gen.stages.questions.tasks import SPLITS, TASKS, TASK_SPECS, describe
from spare_gen.stages.questions.layout import empty_splits, empty_splits_warning
from spare_gen.stages.questions.schema import QuestionsSummary
from spare_gen.runner.isolation import Status
from spare_gen.rating.pairs import PairRow
from spare_gen.rows import rows_from_table
from spare_gen.versions import package_versions
from spare_gen.stages.pool.schema import CORRUPTIONS_FILE, PAIRS_FILE, WIREFRAMES_FILE, CorruptionRow

CARD_NAME = "README.md"
SOURCE_WORDS = {ModelSource.HOUSES: "procedural house"}  # how the card names a models source (else its value)
PREVIEW_DIR = "preview"
POOL_BEGIN = "<!-- spare-gen pool: begin (rewritten when the pool stage finishes) -->"
POOL_END = "<!-- spare-gen pool: end -->"
PATHS_CONFIG_SUFFIX = "_paths"  # the config over the question tables themselves (paths, no embedded images)

RULES = [
    "Answer positions are uniform: in every task and split each answer index occurs equally often (at most 1 apart).",
    "Each drawing appears once across all tasks: a model is used by at most one question in the whole dataset.",
    "No two candidates of a question are the same or nearly the same drawing (identical PNG bytes, or symmetric "
    "chamfer distance of the vector drawings below `duplicate_tolerance_px`).",
    "Models the drawing stage flagged blank, tiny or duplicate are never used.",
    "Splits are made by model (no model in two splits), sized {ratio}, and every split of every task has the same "
    "mix of 2/3/4-primitive models (counts at most 1 apart).",
    "All images of a task have the same size, resolution and scale rule (one framing per model, shared by all "
    "its views and by its cut objects).",
]


REUSE_RULE = ("Each model serves at most one question per task (`questions.model_reuse = \"per_task\"`, as the "
              "original SPARE3D reused its models between tasks): every task draws from the same models, and a "
              "model is in the same split in every task.")


def rules(config: Config) -> list[str]:
    """The card's rules: rule 2 says how models are shared between tasks, rule 5 the configured split ratio."""
    reuse = config.questions.model_reuse is ModelReuse.PER_TASK
    ratio = split_ratio(config.questions.split)
    return [REUSE_RULE if reuse and i == 1 else rule.replace("{ratio}", ratio) for i, rule in enumerate(RULES)]


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _in_order(by_name: dict) -> list[tuple]:
    """Items of a dict keyed by task or split names in task / split order (the summary file sorts its keys)."""
    order = {name: i for i, name in enumerate([*(t.value for t in TASKS), *SPLITS])}
    return sorted(by_name.items(), key=lambda item: order.get(item[0], len(order)))


def _counts(summary: QuestionsSummary) -> str:
    rows = []
    for task in TASKS:
        produced = summary.produced.get(task.value)
        if produced is None:
            continue
        rows.append([f"`{task.value}`", summary.requested[task.value], summary.planned[task.value],
                     *(produced[s] for s in SPLITS), sum(produced.values())])
    table = _table(["task", "requested", "planned", *SPLITS, "total"], rows)
    empty = empty_splits(summary.produced)
    return table + (f"\n\n**{empty_splits_warning(empty)}.**" if empty else "")


def _answers(summary: QuestionsSummary) -> str:
    rows = [[f"`{t}`", s, " / ".join(map(str, counts))] for t, splits in _in_order(summary.answers)
            for s, counts in _in_order(splits) if counts]
    return _table(["task", "split", "answer 0 / 1 / 2 / 3"], rows)


def _mix(summary: QuestionsSummary) -> str:
    rows = [[f"`{t}`", s, ", ".join(f"{'file' if k == 'null' else k + ' prim.'}: {n}" for k, n in mix.items()) or "-"]
            for t, splits in _in_order(summary.primitive_mix) for s, mix in _in_order(splits)]
    return _table(["task", "split", "models by primitive count"], rows)


def _rejections(summary: QuestionsSummary) -> str:
    rows = [["(all tasks)", "model filter (drawing stage)", rule, n] for rule, n in summary.filtered_models.items()]
    for task in TASKS:
        for rule, n in summary.rejected_models.get(task.value, {}).items():
            rows.append([f"`{task.value}`", "model", rule, n])
        for rule, n in summary.rejected_candidates.get(task.value, {}).items():
            rows.append([f"`{task.value}`", "candidate (cut attempt)", rule, n])
        if summary.surplus_models.get(task.value):
            rows.append([f"`{task.value}`", "model", "accepted but not needed (surplus)",
                         summary.surplus_models[task.value]])
    return _table(["task", "level", "rule", "count"], rows) if rows else "Nothing was rejected."


def _fields(task: TaskName) -> str:
    return _table(["column", "type", "description"], [[f"`{n}`", f"`{t}`", d] for n, t, d in describe(task)])


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def _yaml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML scalar


def yaml_header(config: Config, summary: QuestionsSummary, splits: dict[str, list[str]]) -> str:
    """The Hugging Face metadata block: license, categories, size and one configuration per task.

    ``<task>`` reads ``hf/<task>/<split>.parquet`` (PNG drawings embedded as Image features);
    ``<task>_paths`` reads the question tables themselves (``val.parquet`` as the ``validation`` split).
    Empty splits have no file and are not listed.
    """
    tasks = [t for t in TASKS if splits.get(t.value)]
    total = sum(sum(p.values()) for p in summary.produced.values())
    categories = sorted({c for t in tasks for c in TASK_SPECS[t].hf_categories})
    lines = ["---", f"pretty_name: {_yaml_str(config.card.pretty_name)}", f"license: {config.card.license}",
             "task_categories:", *[f"- {c}" for c in categories],
             "tags:", *[f"- {t}" for t in ("spatial-reasoning", "line-drawings", "cad", "spare3d", "synthetic")],
             "size_categories:", f"- {_size_category(total)}", "configs:"]
    for i, task in enumerate(tasks):
        for name, path in ((task.value, lambda s, t=task: hf_path(Path("."), t.value, s).as_posix()),
                           (task.value + PATHS_CONFIG_SUFFIX, lambda s, t=task: f"questions/{t.value}/{s}.parquet")):
            lines += [f"- config_name: {name}", *(["  default: true"] if i == 0 and name == task.value else []),
                      "  data_files:"]
            for split in splits[task.value]:
                lines += [f"  - split: {HF_SPLIT[split]}", f"    path: {path(split)}"]
    return "\n".join([*lines, "---"])


def _citation(config: Config) -> list[str]:
    own = ["This dataset:", "", "```bibtex", config.card.citation.strip(), "```", ""] if config.card.citation.strip() else []
    return ["## Citation", "", *own, "The tasks follow SPARE3D; please cite it:", "", "```bibtex",
            config.card.spare3d_citation.strip(), "```", ""]


def _examples(out: Path | None, tasks: list[TaskName]) -> list[str]:
    lines = ["## Example images", "",
             "A few questions per task (contact sheets; the correct answer framed in green). "
             "`spare-gen show <this folder>` writes a browsable page with the answers behind a toggle.", ""]
    for t in tasks:
        rel = f"{PREVIEW_DIR}/{t.value}.png"
        lines += [f"### `{t.value}`", "", f"![{t.value}]({rel})", ""]
    return lines


def _quality(out: Path | None) -> list[str]:
    """Counts of models the real-CAD quality gate flagged (models.parquet ``quality``), if any."""
    path = None if out is None else Path(out) / MODELS_FILE
    if path is None or not shards.exists(path) or "quality" not in shards.schema(path).names:
        return []
    rows = rows_from_table(ModelRow, shards.read(path, columns=["quality", "quality_reason"]))
    flagged: dict[str, int] = {}
    for r in rows:
        if r.quality and r.quality != Quality.OK:
            flagged[r.quality] = flagged.get(r.quality, 0) + 1
    text = ("No model was flagged." if not flagged else
            _table(["quality flag", "models"], [[f"`{k}`", n] for k, n in sorted(flagged.items())]))
    return ["## CAD quality gate", "",
            "Models whose B-rep fails OpenCASCADE's BRepCheck (`invalid_brep`) or whose file holds several disjoint "
            "solids (`disjoint_solids`) are kept in `models.parquet` with `quality` and `quality_reason`, and make no "
            "question unless `questions.allow_flagged_cad = true`.", "", text, ""]


def pool_section(out: Path | None) -> str:
    """The corrupted-pool section (between markers, rewritten when the pool stage finishes)."""
    out = Path(out) if out is not None else None
    lines = [POOL_BEGIN, "## Corrupted-wireframe pool", ""]
    if out is None or not (out / CORRUPTIONS_FILE).is_file():
        lines += ["No corrupted-wireframe pool in this folder (`pool.enabled = false`, or the pool stage has not run).",
                  POOL_END]
        return "\n".join(lines)
    variants = rows_from_table(CorruptionRow, pq.read_table(out / CORRUPTIONS_FILE,
                                                            columns=["model_id", "kind", "severity", "status"]))
    n_gt = pq.read_metadata(out / WIREFRAMES_FILE).num_rows if (out / WIREFRAMES_FILE).is_file() else 0
    counts: dict[tuple, int] = {}  # (kind, severity) -> usable variants
    for v in variants:
        if v.status == Status.OK:
            key = (v.kind, v.severity)
            counts[key] = counts.get(key, 0) + 1
    kinds = sorted({k for k, _ in counts})
    severities = [s for s in ("low", "medium", "high") if any(s == sv for _, sv in counts)]
    pairs = {}
    if (out / PAIRS_FILE).is_file():
        for r in rows_from_table(PairRow, pq.read_table(out / PAIRS_FILE, columns=["pair_type"])):
            pairs[r.pair_type] = pairs.get(r.pair_type, 0) + 1
    lines += [
        f"3D wireframes of {n_gt} ground-truth models (`wireframes.parquet`, normalised, transform stored) and "
        f"{sum(counts.values())} corrupted variants (`corruptions.parquet`: kind, severity, seed, every wireframe "
        "metric), for human rating of wireframe quality: pairs of variants in `pairs.parquet` and "
        "`pool/annotation_pairs.csv`, pictures in `pool/<model_id>/` (ground truth black, variant blue). "
        "Rank them with `spare-gen rank <this folder> answers.csv`.", "",
        _table(["kind", *severities], [[f"`{k}`", *(counts.get((k, s), 0) for s in severities)] for k in kinds]),
        "", f"Pairs by type: {', '.join(f'{k} {n}' for k, n in sorted(pairs.items())) or 'none'}.", "",
    ]
    if (out / PREVIEW_DIR / "corruptions.png").is_file():
        lines += [f"![corrupted variants]({PREVIEW_DIR}/corruptions.png)", ""]
    return "\n".join([*lines, POOL_END])


def replace_marked(text: str, begin: str, end: str, section: str) -> str:
    """``text`` with the section between ``begin`` and ``end`` replaced, or ``section`` appended."""
    start, stop = text.find(begin), text.find(end)
    if start != -1 and stop > start:
        return text[:start] + section + text[stop + len(end):]
    return (text.rstrip("\n") + "\n\n" if text.strip() else "") + section + "\n"


def card_text(config: Config, summary: QuestionsSummary, out: Path | None = None,
              splits: dict[str, list[str]] | None = None) -> str:
    """The dataset card (README.md): header, what the tasks are, how to load them, the rules, counts and
    fields, quality, examples, the pool, the citation, the config and the versions."""
    tasks = [t for t in TASKS if t.value in summary.produced]
    if splits is None:  # which split files exist: the non-empty ones
        splits = {t: [s for s in SPLITS if n.get(s)] for t, n in summary.produced.items()}
    parts = [yaml_header(config, summary, splits), "", *_intro(config, tasks), *_loading(tasks), *_statistics(config, summary)]
    for t in tasks:
        parts += [f"### `{t.value}`", "", _fields(t), ""]
    parts += [*_quality(out), *_examples(out, tasks), pool_section(out), "", *_citation(config)]
    parts += [
        "## Config",
        "",
        "```json",
        json.dumps(_published_config(config), indent=2, sort_keys=True),
        "```",
        "",
        "## Versions",
        "",
        _table(["package", "version"], [[k, v] for k, v in package_versions().items()]),
        "",
    ]
    return "\n".join(parts)


def _published_config(config: Config) -> dict:
    """The config as the card shows it: no output folder, of the runner only the unit budget, test hooks named."""
    cfg = config.model_dump(mode="json")
    cfg.pop("out", None)  # where and how it ran does not change the content: keep the card byte-stable
    cfg["runner"] = {"timeout_s": cfg["runner"]["timeout_s"]}
    hooks = sorted(k for k, v in cfg.pop("debug", {}).items() if isinstance(v, list) and v)  # test hooks: not published
    cfg["test_hooks"] = f"active: {', '.join(hooks)}" if hooks else "none active"
    return cfg


def _task_options(config: Config) -> str:
    """What the tasks say of their options (``TaskSpec.card_options``), in task order."""
    return ", ".join(spec.card_options(task_options(task, config.questions))
                     for task, spec in TASK_SPECS.items() if spec.card_options is not None)


def _intro(config: Config, tasks: list[TaskName]) -> list[str]:
    return [
        "# SPARE3D-style spatial-reasoning question sets",
        "",
        f"Generated by `spare_gen` from {SOURCE_WORDS.get(config.models.source, config.models.source.value)} models, "
        f"seed {config.seed}. Five tasks after "
        "SPARE3D (Han et al., CVPR 2020), with balanced answers and model-disjoint splits by construction; the "
        "bias audit below reports what question-blind probes (pixels, paths, file order, file bytes, metadata) "
        "could still exploit. Check any copy with `spare-gen validate <this folder>`.",
        "",
        f"Drawing preset `{config.render.preset.value}` (`render.preset`), {_task_options(config)}; "
        f"`spare3d_csg` / `spare3d_abc` "
        f"and `spare3d` draw, cut and pose like the original SPARE3D generator. "
        f"{drawing_rule(config.render).describe()}",
        "",
        "## Tasks",
        "",
        *[f"- **`{t.value}`** - {TASK_SPECS[t].summary} Files: `questions/{t.value}/{{train,val,test}}.parquet`."
          for t in tasks],
        "",
    ]


def _loading(tasks: list[TaskName]) -> list[str]:
    example = next(task for task, spec in TASK_SPECS.items() if spec.card_example)
    points = next(spec for spec in TASK_SPECS.values() if spec.loader.target is TargetKind.POINTS)
    return [
        "## Loading",
        "",
        "With Hugging Face `datasets` (one configuration per task; splits `train`, `validation`, `test`; PNG "
        "drawings as `Image` features, embedded in `hf/<task>/<split>.parquet`):",
        "",
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("<this folder>", "{tasks[0].value if tasks else example.value}")',
        "```",
        "",
        "The question tables themselves (`questions/<task>/{train,val,test}.parquet`, file paths relative to this "
        f"folder) are the configurations `<task>{PATHS_CONFIG_SUFFIX}`, and load with pandas or pyarrow:",
        "",
        "```python",
        "import pandas as pd",
        f'df = pd.read_parquet("questions/{example.value}/train.parquet")',
        "import pyarrow.parquet as pq",
        f'points = pq.read_table("questions/{points.name.value}/train.parquet")'
        f'.column("{points.loader.target_column}")',
        "```",
        "",
        "A split with no questions has no file and is not listed in the configurations.",
        "",
        "`questions/files.parquet` holds the SHA-256 of every file a question names.",
        "",
    ]


def _statistics(config: Config, summary: QuestionsSummary) -> list[str]:
    """Rules, counts, answers, primitive mix and rejections, then the heading of the per-task fields."""
    return [
        "## Rules",
        "",
        *[f"{i}. {r}" for i, r in enumerate(rules(config), 1)],
        "",
        "## Counts",
        "",
        _counts(summary),
        "",
        f"Usable models by primitive count: {summary.usable_models}; needed: {summary.needed_models}.",
        "",
        "## Answer distribution",
        "",
        _answers(summary),
        "",
        "## Primitive mix",
        "",
        _mix(summary),
        "",
        "## Rejections by rule",
        "",
        _rejections(summary),
        "",
        "## Fields",
        "",
    ]
