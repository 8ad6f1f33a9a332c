"""The paper's learned metric: frozen DINOv2 features of canonical renderings, an MLP head, a Bradley-Terry loss.

As in the ICCV 2025 paper's "Learned metric": each candidate is drawn over its ground truth (the pool's
picture style: ground truth black, candidate blue, vertex squares) from one canonical viewpoint
(:data:`CANONICAL_VIEW`, the pool's front-right trimetric view); a frozen DINOv2 backbone (Hugging Face
``transformers``' ``Dinov2Model``) turns each picture into a feature vector (the class token beside the mean of
the patch tokens, DINOv2's linear-probe recipe); an MLP head g maps features to a score and is trained with a
Bradley-Terry model, P(left wins) = sigmoid(g(left) - g(right)), by binary cross-entropy on the decisive
judgements in batches of 16. 'Equal' answers carry no side and are left out of the fit.

Cross-validation keeps ground truths (models) *and* methods (corruption types: kind/severity, or a
prediction's method) disjoint between training and test: models fall into ``folds // METHOD_GROUPS`` groups and
methods into :data:`METHOD_GROUPS` groups (seeded shuffles; so an odd fold count rounds down, and there are
never more model groups than models); a fold tests one (model group, method group) cell on
the judgements whose model is in that model group and whose two sides are both in that method group, and trains
on the judgements whose model is outside that model group and whose two sides are both outside that
method group. Every judgement whose two sides share a method group is tested exactly once. Every single metric and the
metric-feature model (:mod:`spare_gen.ranking.learned`, refitted per fold) are scored on the same held-out
judgements, so the comparison is like for like.

Backbones: a folder holding a saved ``Dinov2Model`` (``config.json`` and weights), a Hugging Face model name
found in the local cache (``local_files_only``; nothing is ever downloaded), or :data:`RANDOM_SMALL`, a small
randomly initialised DINOv2 (seeded) that only exists for tests and dry runs. Seeded torch; a GPU is used when
present; on the CPU the same seed and thread count give the same bytes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

import torch  # the torch extra; the CLI names it when it is missing
from torch import nn
from transformers import Dinov2Config, Dinov2Model
from transformers.utils import logging as hf_logging

from spare_gen.canvas.raster import rasterize
from spare_gen.ranking.agreement import agreement_scores, metric_preference
from spare_gen.ranking.judgements import Choice
from spare_gen.ranking.learned import LEARNED_IMAGE_NAME, LEARNED_NAME, fit_learned_metric
from spare_gen.rng import derive_rng, derive_seed
from spare_gen.rating.pictures import VIEWS, cameras_for, layers_for
from spare_gen.wireframe import Wireframe

IMAGE_NAME = LEARNED_IMAGE_NAME  # the score column (higher is better) and the CV table's row
RANDOM_SMALL = "random-small"  # a randomly initialised small DINOv2: tests and dry runs only
DEFAULT_BACKBONE = "facebook/dinov2-small"
DEFAULT_IMAGE_SIZE = 224  # DINOv2's evaluation resolution (16 x 16 patches of 14 px)
DEFAULT_FOLDS = 10  # the paper's 10-fold cross-validation
METHOD_GROUPS = 2  # method groups of the model x method fold grid (folds // METHOD_GROUPS model groups)
CANONICAL_VIEW = VIEWS[0]
IMAGENET_MEAN = (0.485, 0.456, 0.406)  # DINOv2's input normalisation
IMAGENET_STD = (0.229, 0.224, 0.225)
RANDOM_SMALL_CONFIG = {  # 2 layers of width 48: builds in milliseconds, runs on a CPU in tests
    "hidden_size": 48, "num_hidden_layers": 2, "num_attention_heads": 3, "intermediate_size": 96,
    "patch_size": 14, "image_size": 112,
}  # fmt: skip
RENDER_BATCH = 32  # pictures rendered and encoded at a time (bounds memory)


@dataclass(frozen=True)
class HeadSettings:
    """The MLP head and its Bradley-Terry training (the paper: batch size 16)."""

    hidden: int = 256
    epochs: int = 10
    batch_size: int = 16
    lr: float = 1e-3
    weight_decay: float = 1e-4


@dataclass(frozen=True)
class ImageSettings:
    """Everything that decides the image metric's bytes, besides the pool and the answers."""

    backbone: str = DEFAULT_BACKBONE
    image_size: int = DEFAULT_IMAGE_SIZE
    folds: int = DEFAULT_FOLDS
    seed: int = 0
    threads: int = 1  # torch CPU threads; the same count gives the same bytes
    head: HeadSettings = field(default_factory=HeadSettings)


def torch_seed(seed: int, *keys: object) -> int:
    return derive_seed(seed, *keys) % (2**63)


def device() -> "torch.device":
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@contextmanager
def torch_determinism(threads: int) -> Iterator[None]:
    """Deterministic kernels and a fixed CPU thread count for the block; the previous state comes back after."""
    old_threads, old_det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(max(1, int(threads)))
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.set_num_threads(old_threads)
        torch.use_deterministic_algorithms(old_det)


# ------------------------------------------------------------------------------------------- backbone


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """No progress bars or info lines from transformers while loading (the command prints its own summary)."""
    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def load_backbone(spec: str, seed: int = 0) -> "Dinov2Model":
    """A frozen ``Dinov2Model`` in eval mode: :data:`RANDOM_SMALL`, a local folder, or a cached Hub name."""
    if spec == RANDOM_SMALL:
        torch.manual_seed(torch_seed(seed, "learn-metric-image", "backbone"))
        model = Dinov2Model(Dinov2Config(**RANDOM_SMALL_CONFIG))
    else:
        path = Path(spec).expanduser()
        if path.is_dir():
            if not (path / "config.json").is_file():
                raise FileNotFoundError(f"--backbone {spec}: the folder has no config.json (a saved Dinov2Model)")
            source = str(path)
        elif "/" in spec and (spec.startswith((".", "/", "~")) or path.parent.is_dir()):
            raise FileNotFoundError(f"--backbone {spec}: no such folder")
        else:
            source = spec
        try:
            with quiet_transformers():
                model = Dinov2Model.from_pretrained(source, local_files_only=True)
        except (OSError, ValueError):
            raise ValueError(
                f"--backbone {spec!r} is no folder with a saved Dinov2Model and not in the Hugging Face cache "
                "(nothing is downloaded: fetch it where there is network, e.g. Dinov2Model.from_pretrained(NAME)"
                ".save_pretrained(FOLDER), and pass the folder)"
            ) from None
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def backbone_info(model: "Dinov2Model") -> dict:
    c = model.config
    return {"hidden_size": int(c.hidden_size), "layers": int(c.num_hidden_layers), "patch_size": int(c.patch_size)}


# ------------------------------------------------------------------------------------------ rendering


def canonical_picture(gt: Wireframe, candidate: Wireframe, size: int) -> np.ndarray:
    """(size, size, 3) uint8: the candidate (blue) over its ground truth (black) from :data:`CANONICAL_VIEW`,
    framed like the pool's pictures of that ground truth."""
    cameras = cameras_for(gt, size, (CANONICAL_VIEW,))
    return rasterize(layers_for(cameras, gt, candidate), size)


def pixel_values(images: np.ndarray) -> "torch.Tensor":
    """(N, H, W, 3) uint8 -> (N, 3, H, W) float32 normalised as DINOv2 expects."""
    x = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float() / 255.0
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return (x - mean) / std


def encode(model: "Dinov2Model", images: np.ndarray, on: "torch.device") -> np.ndarray:
    """(N, 2 * hidden) float32: the class token beside the mean patch token of the last layer."""
    with torch.inference_mode():
        tokens = model(pixel_values=pixel_values(images).to(on)).last_hidden_state
        features = torch.cat([tokens[:, 0], tokens[:, 1:].mean(dim=1)], dim=1)
    return features.float().cpu().numpy()


def picture_features(
    model: "Dinov2Model", gts: Mapping[str, Wireframe], candidates: Sequence[tuple[str, Wireframe]], size: int,
    on: "torch.device",
) -> np.ndarray:
    """Features of every (model_id, candidate) picture, in order; rendered and encoded in batches."""
    if size % model.config.patch_size:
        raise ValueError(f"--image-size {size} is not a multiple of the backbone's patch size {model.config.patch_size}")
    out = []
    for start in range(0, len(candidates), RENDER_BATCH):
        chunk = candidates[start:start + RENDER_BATCH]
        images = np.stack([canonical_picture(gts[model_id], wf, size) for model_id, wf in chunk])
        out.append(encode(model, images, on))
    width = 2 * int(model.config.hidden_size)
    return np.concatenate(out) if out else np.zeros((0, width), np.float32)


# ---------------------------------------------------------------------------------------------- head


class ScoreHead(nn.Module):
    """g: standardised features -> one score (higher is better)."""

    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        return self.net(x).squeeze(-1)


@dataclass
class ImageMetric:
    """A trained head with the feature standardisation it was trained with."""

    head: ScoreHead
    mean: np.ndarray
    std: np.ndarray

    def score(self, features: np.ndarray) -> np.ndarray:
        z = torch.from_numpy(((features - self.mean) / self.std).astype(np.float32))
        on = next(self.head.parameters()).device
        with torch.inference_mode():
            return self.head.eval()(z.to(on)).double().cpu().numpy()

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        torch.save({"head": {k: v.cpu() for k, v in self.head.state_dict().items()},
                    "feature_mean": torch.from_numpy(self.mean), "feature_std": torch.from_numpy(self.std)}, buffer)
        return buffer.getvalue()


def decisive_pairs(judgements: pd.DataFrame, position: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(left rows, right rows, 1.0 where the left side won) of the decisive judgements."""
    decisive = judgements[judgements["choice"] != Choice.EQUAL.value]
    left = position.reindex(decisive["left_id"].astype(str)).to_numpy()
    right = position.reindex(decisive["right_id"].astype(str)).to_numpy()
    won = (decisive["choice"] == Choice.LEFT.value).to_numpy(np.float32)
    return left, right, won


def train_head(
    features: np.ndarray, judgements: pd.DataFrame, position: pd.Series, settings: HeadSettings, seed: int,
    *keys: object, on: "torch.device | None" = None,
) -> ImageMetric:
    """Fit g by Bradley-Terry cross-entropy on the decisive judgements (rows of ``features`` by ``position``)."""
    left, right, won = decisive_pairs(judgements, position)
    if len(won) == 0 or len(np.unique(won)) < 2:
        raise ValueError("learn-metric needs decisive judgements for both sides (left and right); got too few")
    on = on or device()
    used = np.unique(np.concatenate([left, right]))
    mean = features[used].mean(axis=0)
    std = features[used].std(axis=0)
    std = np.where(std > 1e-8, std, 1.0)
    z = torch.from_numpy(((features - mean) / std).astype(np.float32)).to(on)
    torch.manual_seed(torch_seed(seed, "learn-metric-image", "head", *keys))
    head = ScoreHead(features.shape[1], settings.hidden).to(on)
    optimiser = torch.optim.AdamW(head.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    loss_fn = nn.BCEWithLogitsLoss()
    rng = derive_rng(seed, "learn-metric-image", "batches", *keys)
    li, ri, y = (torch.from_numpy(a).to(on) for a in (left.astype(np.int64), right.astype(np.int64), won))
    head.train()
    for _ in range(settings.epochs):
        order = torch.from_numpy(rng.permutation(len(won))).to(on)
        for start in range(0, len(order), settings.batch_size):
            batch = order[start:start + settings.batch_size]
            logits = head(z[li[batch]]) - head(z[ri[batch]])
            loss = loss_fn(logits, y[batch])
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
    head.eval()
    return ImageMetric(head, mean.astype(np.float64), std.astype(np.float64))


# ---------------------------------------------------------------------------------------- folds


def method_labels(corruptions: pd.DataFrame) -> pd.Series:
    """Corruption id -> its method: ``kind/severity`` for a corruption, the kind (``method:<name>``) for a prediction."""
    kind = corruptions["kind"].astype(str)
    severity = corruptions["severity"]
    label = np.where(severity.notna(), kind + "/" + severity.astype(str), kind)
    return pd.Series(label, index=corruptions["corruption_id"].astype(str).to_numpy())


def _groups(values: Sequence[str], n: int, seed: int, what: str) -> dict[str, int]:
    order = sorted(set(map(str, values)))
    shuffled = [order[i] for i in derive_rng(seed, "learn-metric-image", "folds", what).permutation(len(order))]
    return {v: k % n for k, v in enumerate(shuffled)}


@dataclass(frozen=True)
class Fold:
    model_group: int
    method_group: int
    train: np.ndarray  # boolean masks over the judgements
    test: np.ndarray


def disjoint_folds(judgements: pd.DataFrame, method_of: pd.Series, folds: int, seed: int) -> list[Fold]:
    """The model x method fold grid (module docstring): train and test share no model and no method."""
    models = judgements["model_id"].astype(str)
    methods = sorted(set(method_of.reindex(judgements["left_id"].astype(str)))
                     | set(method_of.reindex(judgements["right_id"].astype(str))))  # fmt: skip
    n_models, n_methods = models.nunique(), len(methods)
    if n_models < 2 or n_methods < 2:
        raise ValueError(f"learn-metric --features image needs judgements on at least 2 models and 2 methods, "
                         f"got {n_models} models and {n_methods} methods")  # fmt: skip
    method_groups = min(METHOD_GROUPS, n_methods)
    model_groups = max(2, min(folds // method_groups, n_models))
    model_group = models.map(_groups(models, model_groups, seed, "models")).to_numpy()
    method_group = _groups(methods, method_groups, seed, "methods")
    left = method_of.reindex(judgements["left_id"].astype(str)).map(method_group).to_numpy()
    right = method_of.reindex(judgements["right_id"].astype(str)).map(method_group).to_numpy()
    out = []
    for m in range(model_groups):
        for t in range(method_groups):
            test = (model_group == m) & (left == t) & (right == t)
            train = (model_group != m) & (left != t) & (right != t)
            if test.any() and train.any():
                out.append(Fold(m, t, train, test))
    if not out:
        raise ValueError("learn-metric --features image: no fold has both training and test judgements")
    return out


# -------------------------------------------------------------------------------------- evaluation


def side_scores(held: pd.DataFrame, series: pd.Series, higher: bool) -> tuple[float, float]:
    """(agreement over all held-out judgements: 1 / 0.5 / 0; accuracy over the decisive ones: the paper's
    'correct if g(winner) > g(loser)', a score tie counting half)."""
    left = held["left_id"].astype(str).map(series).to_numpy(float)
    right = held["right_id"].astype(str).map(series).to_numpy(float)
    choice = held["choice"].to_numpy()
    known = ~(np.isnan(left) | np.isnan(right))
    scores = agreement_scores(metric_preference(left[known], right[known], higher), choice[known])
    decisive = choice[known] != Choice.EQUAL.value
    agreement = float(scores.mean()) if len(scores) else np.nan
    accuracy = float(scores[decisive].mean()) if decisive.any() else np.nan
    return agreement, accuracy


def cross_validate(
    features: np.ndarray,
    ids: Sequence[str],
    judgements: pd.DataFrame,
    method_of: pd.Series,
    values: pd.DataFrame,
    higher_is_better: Mapping[str, bool],
    settings: ImageSettings,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, per-fold table): held-out accuracy and agreement of the image metric, the metric-feature
    model and every single metric on the same judgements; summary best first by accuracy."""
    position = pd.Series(np.arange(len(ids)), index=pd.Index(list(ids), dtype=str))
    rows = []
    for k, fold in enumerate(disjoint_folds(judgements, method_of, settings.folds, settings.seed)):
        fit_on, held = judgements[fold.train], judgements[fold.test]
        image = train_head(features, fit_on, position, settings.head, settings.seed, "fold", k)
        columns = {IMAGE_NAME: (pd.Series(image.score(features), index=position.index), True)}
        if higher_is_better:
            learned = fit_learned_metric(fit_on, values, higher_is_better)
            columns[LEARNED_NAME] = (pd.Series(learned.score(values), index=values.index.astype(str)), True)
        columns.update({m: (values[m].astype(float), h) for m, h in higher_is_better.items()})
        for name, (series, higher) in columns.items():
            agreement, accuracy = side_scores(held, series, higher)
            rows.append({"fold": k, "model_group": fold.model_group, "method_group": fold.method_group,
                         "metric": name, "n_train": int(fold.train.sum()), "n_test": int(fold.test.sum()),
                         "n_test_decisive": int((held["choice"] != Choice.EQUAL.value).sum()),
                         "accuracy": accuracy, "agreement": agreement})  # fmt: skip
    per_fold = pd.DataFrame(rows)
    summary = []
    for name, group in per_fold.groupby("metric", sort=False):
        ok = group["accuracy"].notna() & (group["n_test_decisive"] > 0)
        summary.append({
            "metric": name,
            "accuracy": float(np.average(group.loc[ok, "accuracy"], weights=group.loc[ok, "n_test_decisive"]))
            if ok.any() else np.nan,
            "accuracy_std_over_folds": float(group.loc[ok, "accuracy"].std(ddof=0)),
            "agreement": float(np.average(group["agreement"], weights=group["n_test"])),
            "folds": int(len(group)),
        })  # fmt: skip
    table = pd.DataFrame(summary).sort_values(["accuracy", "metric"], ascending=[False, True], kind="stable")
    return table.reset_index(drop=True), per_fold


def settings_json(settings: ImageSettings, info: Mapping) -> str:
    body = {"kind": "dinov2-mlp-bradley-terry", "view": CANONICAL_VIEW.name, "features": "cls+mean-patch",
            **asdict(settings), "backbone_config": dict(info)}  # fmt: skip
    return json.dumps(body, indent=2) + "\n"
