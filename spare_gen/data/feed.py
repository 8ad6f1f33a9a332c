"""The training feed: questions as uint8 numpy items, a decoded cache per split, and the move to the device.

An item is a dict of numpy arrays, images uint8 in CHW (channel order ``channels``, RGB by default: the pixels of
``spare_gen.data.torch`` before its float conversion):

* ``views`` (9, H, W): F, R, T, once per question;
* ``drawing`` (3, H, W): the extra input drawing of tasks that have one (isometric_to_pose: the isometric drawing);
* ``candidates`` (K, 3, H, W): candidate tasks (three_view_to_isometric, pose_to_isometric), K = the row's choices;
* ``target``: isometric_view_generation's drawing (3, H, W) uint8, point_cloud_generation's (n, 3) float32 points;
* ``pose`` (8,) float32 one-hot (pose_to_isometric); ``answer`` int64 (multiple-choice tasks);
* ``question_id`` (str), ``n_primitives`` int64 (-1 for file models).

PyTorch's default collate stacks them into a batch, and ``collate`` does the same in numpy (no thread pool);
``to_device`` moves it to the device as uint8 and only there makes the images float32 in [0, 1]; ``legacy_inputs``
rebuilds the ``inputs`` tensor of ``spare_gen.data.torch`` from that device batch (a model that wants F, R, T beside
each candidate broadcasts them on the device).

Items are built in numpy and become tensors once, in the collate: no per-item tensor operation runs through torch's
intra-op thread pool. With ``cache=True`` (the default) the split's images are decoded once into one uint8 array
file ((images, 3, H, W), memory-mapped), so an epoch costs a memory copy per item instead of PNG decoding. The file
is named by the dataset folder, task, split, image size and the SHA-256 of the split's question table: a later epoch
or run reuses it, a changed table (a regenerated dataset) gets a new one, and the stale one is deleted. It is built
under a temporary name and renamed, so two processes building it at once never leave a torn file. It lives outside
the dataset (``default_cache_dir``): the dataset folder stays exactly what the run wrote.

That cache is local: its name hashes the dataset's absolute path. ``FeedDataset.export`` writes a split as one portable,
self-describing xz file instead (``spare_gen.data.cachefile``: images, labels, question ids, task, split, table hash,
size, channel and view order), and ``exported_feed`` loads such a file from any path, with no PNG and no dataset
folder; ``open_feed`` takes either a dataset folder or a folder of exported files. ``questions=N`` keeps a split's
first N questions (a quick run).
"""

from __future__ import annotations

import hashlib
import os
from enum import Enum
from pathlib import Path

import numpy as np
from PIL import Image

try:
    import torch
    from torch.utils.data import Dataset, get_worker_info
except ImportError as exc:  # the base install has no torch; the command line names the extra from ``name``
    raise ModuleNotFoundError("spare_gen.data.feed needs PyTorch: pip install 'spare_gen[torch]'",
                              name="torch") from exc

from spare_gen import __version__
from spare_gen.atomic import with_tmp_path
from spare_gen.config.schema import TaskName
from spare_gen.data.cachefile import CHUNK_BYTES, XZ_PRESET, cache_files, read_cache_file, read_header, \
    write_cache_file
from spare_gen.data.loaders import decode_rgb, image_size
from spare_gen.data.tables import Kind, check_split, load_rows
from spare_gen.filehash import sha256_file
from spare_gen.store.manifest import read_manifest
from spare_gen.store.packed import drawing_bytes, packed_paths
from spare_gen.stages.questions.layout import ALL_POSES, task_name
from spare_gen.stages.questions.schema import QuestionCommon, split_path
from spare_gen.stages.questions.spec import TargetKind
from spare_gen.stages.questions.tasks import TASK_SPECS, dataset_choices

N_POSES = len(ALL_POSES)
N_VIEWS = 3  # F, R, T
VIEW_ORDER = ("f", "r", "t")
CACHE_ENV = "SPARE_GEN_CACHE"  # overrides the cache folder
CACHE_FORMAT = 1  # bump when the cache file's layout changes (old files then get new names)
HASH_HEX = 16  # hex digits of a hash in a cache file name


class Channels(str, Enum):
    """Colour channel order of every image."""

    RGB = "rgb"
    BGR = "bgr"


def channel_order(value: "Channels | str") -> Channels:
    try:
        return Channels(value)
    except ValueError:
        raise ValueError(f"unknown channel order {value!r}; choose from rgb, bgr") from None


def default_cache_dir() -> Path:
    """``$SPARE_GEN_CACHE``, else ``$XDG_CACHE_HOME/spare_gen``, else ``~/.cache/spare_gen``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "spare_gen"


def pose_one_hot_array(pose: int) -> np.ndarray:
    """(8,) float32 one-hot of an isometric pose 1..8."""
    if pose not in ALL_POSES:
        raise ValueError(f"unknown isometric pose {pose!r}; choose from 1..8")
    out = np.zeros(N_POSES, dtype=np.float32)
    out[ALL_POSES.index(pose)] = 1.0
    return out


def _decode_into(slot: np.ndarray, image: Image.Image, channels: Channels) -> None:
    """Copy an RGB image into a (3, H, W) uint8 slot in ``channels`` order, band by band (Pillow hands out one band
    as contiguous bytes at a third of the cost of transposing its (H, W, 3) array)."""
    for plane, band in zip(slot, channels.value.upper()):
        plane[...] = np.frombuffer(image.tobytes("raw", band), dtype=np.uint8).reshape(plane.shape)


class FeedDataset(Dataset):
    """Map-style dataset of one task split as uint8 numpy items (see the module docstring); picklable.

    ``size``: resize every image to it (int or (height, width)); without it the images keep their size, which must
    then be the same for all. ``cache``: read the split's decoded cache (built here if missing or stale) instead of
    decoding PNGs; ``cache_dir``: its folder (``default_cache_dir()`` by default). ``questions``: keep only the
    split's first N questions. ``exported_feed`` makes one from a portable cache file instead.
    """

    source: Path | None = None  # the portable cache file it was loaded from, if any
    cache_reused: bool = False  # its decoded cache was already there (a repeated `spare-gen cache`)

    def __init__(self, out: str | Path, task: TaskName | str, split: str, *,
                 size: int | tuple[int, int] | None = None, channels: Channels | str = Channels.RGB,
                 cache: bool = True, cache_dir: str | Path | None = None, questions: int | None = None):
        self.out = Path(out).resolve()
        self.task = task_name(task)
        self.split = check_split(split)
        self.channels = channel_order(channels)
        self.spec = TASK_SPECS[self.task]
        self.questions = _question_limit(questions)
        rows = load_rows(self.out, self.task, self.split)[:self.questions]
        keys = self.spec.loader
        self.paths = [self._image_paths(row) for row in rows]
        self.offsets = np.cumsum([0] + [len(p) for p in self.paths])
        # drawings packed in the views table (render.store); the others are read as files, without a lookup per image
        self.packed = packed_paths(self.out).intersection(rel for rels in self.paths for rel in rels)
        self.n_candidates = [len(row.candidates(Kind.PNG.value)) if keys.candidates else 0 for row in rows]
        self.question_ids = [str(row.question_id) for row in rows]
        self.n_primitives = np.array([-1 if r.n_primitives is None else int(r.n_primitives) for r in rows],
                                     dtype=np.int64)
        self.answers = np.array([r.correct_answer() for r in rows], np.int64) if self.spec.n_answers else None
        self.poses = (np.array([pose_one_hot_array(keys.query_pose(r)) for r in rows], np.float32).reshape(-1, N_POSES)
                      if keys.pose is not None else None)
        self.points = ([np.asarray(keys.target_points(r), dtype=np.float32).reshape(-1, 3) for r in rows]
                       if keys.target is TargetKind.POINTS else None)
        self.n_choices = dataset_choices(self.out, self.task)
        self.table_sha256 = sha256_file(split_path(self.out, self.task.value, self.split))
        self.size = image_size(size) or self._native_size()
        self.cache_path = self._cache(Path(cache_dir) if cache_dir else default_cache_dir()) if cache else None
        self._images: np.ndarray | None = None  # the memory-mapped cache, opened per process

    def _image_paths(self, row: QuestionCommon) -> list[str]:
        """Every image of a row in item order: F, R, T, extra drawings, candidates, a target drawing."""
        kind = Kind.PNG.value
        keys = self.spec.loader
        paths = list(row.three_views(kind).values())
        paths += [row.drawing(prefix, kind) for prefix in keys.drawing.values()]
        if keys.candidates:
            paths += row.candidates(kind)
        if keys.target is TargetKind.DRAWING and keys.target_column:
            paths.append(row.drawing(keys.target_column, kind))
        if None in paths:
            raise ValueError(f"a {self.task.value} question names no file for a drawing (PNG output disabled?)")
        return paths

    def _native_size(self) -> tuple[int, int]:
        """The size of the split's first drawing ((0, 0) for an empty split: it has no images)."""
        if not self.paths:
            return 0, 0
        width, height = decode_rgb(drawing_bytes(self.out, self.paths[0][0])).size
        return height, width

    def __len__(self) -> int:
        return len(self.question_ids)

    def __getstate__(self) -> dict:  # workers map the local cache themselves; an exported one's images travel
        return self.__dict__ if self.source is not None else {**self.__dict__, "_images": None}

    def decode(self, rel: str) -> Image.Image:
        """One PNG of the dataset as an RGB image at this dataset's size."""
        image = decode_rgb(drawing_bytes(self.out, rel) if rel in self.packed else os.path.join(self.out, rel),
                           self.size)
        if image.size != self.size[::-1]:
            raise ValueError(f"{rel} is {image.size[0]}x{image.size[1]} px, the other drawings "
                             f"{self.size[1]}x{self.size[0]}: pass a size")
        return image

    def decode_all(self, rels: list[str], channels: Channels) -> np.ndarray:
        """PNGs of the dataset as (len(rels), 3, H, W) uint8 in ``channels`` order."""
        out = np.empty((len(rels), 3, *self.size), dtype=np.uint8)
        for slot, rel in zip(out, rels):
            _decode_into(slot, self.decode(rel), channels)
        return out

    def block(self, index: int) -> np.ndarray:
        """The (M, 3, H, W) uint8 images of question ``index`` in item order and this dataset's channel order."""
        cached = self.rgb_images(index, index + 1)
        return np.array(cached[:, ::-1] if self.channels is Channels.BGR else cached)  # the cache is RGB

    def rgb_images(self, start: int, stop: int) -> np.ndarray:
        """The (M, 3, H, W) uint8 RGB images of questions ``start``..``stop - 1``: a view of the cache (local or
        exported), else decoded."""
        if self._images is None and self.cache_path is not None:
            self._images = np.load(self.cache_path, mmap_mode="r")
        if self._images is None:
            return self.decode_all([rel for rels in self.paths[start:stop] for rel in rels], Channels.RGB)
        return self._images[self.offsets[start]:self.offsets[stop]]

    def __getitem__(self, index: int) -> dict:
        images = self.block(index)
        h, w = self.size
        item = {"question_id": self.question_ids[index], "n_primitives": self.n_primitives[index],
                "views": images[:N_VIEWS].reshape(3 * N_VIEWS, h, w)}
        at = N_VIEWS
        if self.spec.loader.drawing:
            n = len(self.spec.loader.drawing)
            item["drawing"] = images[at:at + n].reshape(3 * n, h, w)
            at += n
        if self.spec.loader.candidates:
            item["candidates"] = images[at:at + self.n_candidates[index]]
            at += self.n_candidates[index]
        if self.spec.loader.target is TargetKind.DRAWING:
            item["target"] = images[at]
        elif self.points is not None:
            item["target"] = self.points[index]
        if self.poses is not None:
            item["pose"] = self.poses[index]
        if self.answers is not None:
            item["answer"] = self.answers[index]
        return item

    def _cache(self, cache_dir: Path) -> Path:
        """The path of this split's cache: built (atomically) if missing or unreadable; stale versions deleted."""
        table_hash = self.table_sha256[:HASH_HEX]
        out_hash = hashlib.sha256(str(self.out).encode()).hexdigest()[:HASH_HEX]
        folder = cache_dir / "feed" / f"v{CACHE_FORMAT}" / out_hash / self.task.value
        stem = f"{self.split}-{self.size[0]}x{self.size[1]}" + (f"-first{self.questions}" if self.questions else "")
        path = folder / f"{stem}-{table_hash}.npy"
        shape = (int(self.offsets[-1]), 3, *self.size)
        self.cache_reused = self._cache_holds(path, shape)  # True: decoded by an earlier feed of the same split
        if not self.cache_reused:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ValueError(f"cannot make the feed cache folder {folder}: {exc.strerror}; choose another with "
                                 f"cache_dir= (spare-gen cache --cache-dir) or ${CACHE_ENV}") from None
            with_tmp_path(path, lambda tmp: self._write_cache(tmp, shape))
        for stale in folder.glob(f"{stem}-*.npy"):
            if stale != path:
                stale.unlink(missing_ok=True)
        return path

    @staticmethod
    def _cache_holds(path: Path, shape: tuple[int, ...]) -> bool:
        try:
            cached = np.load(path, mmap_mode="r")
        except (OSError, ValueError):  # missing, or not a whole .npy file
            return False
        return cached.shape == shape and cached.dtype == np.uint8

    def _write_cache(self, tmp: Path, shape: tuple[int, ...]) -> None:
        """The .npy file of every image, RGB, question by question; written, not memory-mapped, so a full disk is an
        OSError (and the temporary file goes), not a SIGBUS."""
        with open(tmp, "wb") as fh:
            np.lib.format.write_array_header_1_0(fh, {"descr": np.dtype(np.uint8).str, "fortran_order": False,
                                                      "shape": shape})
            for rels in self.paths:
                fh.write(self.decode_all(rels, Channels.RGB).data)


    def dataset_record(self, name: str | None = None) -> dict:
        """What the exported header says about the dataset: its name (default: the folder's), folder, seed,
        provenance hash, the isometric-to-pose choice poses and the config it was made with (from dataset.json)."""
        if self.source is not None:
            return self.dataset
        manifest = read_manifest(self.out)
        config = manifest.get("config") or {}
        return {"name": name or self.out.name, "folder": str(self.out), "seed": manifest.get("seed"),
                "provenance_sha256": manifest.get("provenance_sha256"),
                "pose_choices": (config.get("questions") or {}).get("pose_choices"), "config": config}

    def export(self, path: str | Path, *, name: str | None = None, preset: int = XZ_PRESET,
               threads: int | None = None) -> Path:
        """This split as one portable cache file (``spare_gen.data.cachefile``), images RGB at this feed's size."""
        h, w = self.size
        per_question = max(1, 3 * h * w * (int(self.offsets[-1]) // max(len(self), 1)))
        step = max(1, CHUNK_BYTES // per_question)
        chunks = (np.asarray(self.rgb_images(i, min(i + step, len(self)))) for i in range(0, len(self), step))
        arrays = {"offsets": np.asarray(self.offsets, np.int64),
                  "n_candidates": np.asarray(self.n_candidates, np.int64),
                  "n_primitives": self.n_primitives}
        if self.answers is not None:
            arrays["answers"] = self.answers
        if self.poses is not None:
            arrays["poses"] = self.poses
        if self.points is not None:
            arrays["point_counts"] = np.array([len(p) for p in self.points], np.int64)
            arrays["points"] = np.concatenate(self.points) if self.points else np.zeros((0, 3), np.float32)
        keys = self.spec.loader
        item_order = [*VIEW_ORDER, *keys.drawing] + (["candidates"] if keys.candidates else []) + (
            ["target"] if keys.target is TargetKind.DRAWING else [])
        header = {"task": self.task.value, "split": self.split, "table_sha256": self.table_sha256,
                  "n_questions": len(self), "questions_limit": self.questions, "size": [h, w], "channels": "rgb",
                  "view_order": list(VIEW_ORDER), "item_order": item_order,
                  "images": {"shape": [int(self.offsets[-1]), 3, h, w], "dtype": "uint8", "layout": "NCHW"},
                  "question_ids": self.question_ids, "n_choices": self.n_choices,
                  "dataset": self.dataset_record(name), "spare_gen_version": __version__}
        return write_cache_file(path, header, arrays, chunks, preset=preset, threads=threads)


def _question_limit(questions: int | None) -> int | None:
    if questions is not None and questions < 1:
        raise ValueError(f"questions={questions}: keep at least 1 question per split (or all: None)")
    return questions


def exported_feed(path: str | Path, *, size: int | tuple[int, int] | None = None,
                  channels: Channels | str = Channels.RGB, questions: int | None = None,
                  threads: int | None = None) -> FeedDataset:
    """The feed of a portable cache file (``FeedDataset.export``), from any path: the same items as the feed of the
    dataset it was exported from, with no PNG and no dataset folder. ``size``, if given, must be the file's."""
    path = Path(path).resolve()
    cached = read_cache_file(path, threads=threads)
    header, arrays = cached.header, cached.arrays
    feed = FeedDataset.__new__(FeedDataset)
    feed.source, feed.out, feed.cache_path, feed.paths, feed.packed = path, None, None, None, frozenset()
    feed.task, feed.split = task_name(header["task"]), check_split(header["split"])
    feed.channels, feed.spec = channel_order(channels), TASK_SPECS[task_name(header["task"])]
    feed.size = tuple(header["size"])
    if image_size(size) not in (None, feed.size):
        want = image_size(size)
        raise ValueError(f"{path} holds {feed.size[1]}x{feed.size[0]} px images, not {want[1]}x{want[0]}: export "
                         f"it at that size (spare-gen cache --size {want[0]} --export)")
    n = min(header["n_questions"], _question_limit(questions) or header["n_questions"])
    feed.questions = questions
    feed.offsets = arrays["offsets"][:n + 1]
    feed.n_candidates = arrays["n_candidates"][:n].tolist()
    feed.question_ids = header["question_ids"][:n]
    feed.n_primitives = arrays["n_primitives"][:n]
    feed.answers = arrays["answers"][:n] if "answers" in arrays else None
    feed.poses = arrays["poses"][:n] if "poses" in arrays else None
    if "points" in arrays:
        ends = np.cumsum(arrays["point_counts"])
        feed.points = [arrays["points"][e - c:e] for c, e in zip(arrays["point_counts"][:n], ends)]
    else:
        feed.points = None
    feed.n_choices, feed.table_sha256, feed.dataset = header["n_choices"], header["table_sha256"], header["dataset"]
    feed.header = header
    feed._images = cached.images[:int(feed.offsets[-1])]
    return feed


def exported_file(folder: str | Path, task: TaskName | str, split: str) -> Path:
    """The portable cache file of ``task`` / ``split`` in ``folder`` (told apart by their headers)."""
    task, split = task_name(task), check_split(split)
    found = [p for p in cache_files(folder) if (h := read_header(p))["task"] == task.value and h["split"] == split]
    if not found:
        raise FileNotFoundError(f"{folder}: no exported cache of {task.value}/{split} (spare-gen cache OUT --task "
                                f"{task.value} --split {split} --export FILE writes one)")
    if len(found) > 1:
        raise ValueError(f"{folder}: several exported caches of {task.value}/{split} "
                         f"({', '.join(p.name for p in found)}); keep one")
    return found[0]


def holds_exports(folder: str | Path) -> bool:
    """True when ``folder`` is a folder of exported caches rather than a dataset (it has no questions/ tables)."""
    return not (Path(folder) / "questions").is_dir() and bool(cache_files(folder))


def feed_dataset(out: str | Path, task: TaskName | str, split: str, *,
                 size: int | tuple[int, int] | None = None, channels: Channels | str = Channels.RGB,
                 cache: bool = True, cache_dir: str | Path | None = None, questions: int | None = None
                 ) -> FeedDataset:
    """The feed of ``task`` / ``split`` under ``out`` (see ``FeedDataset``)."""
    return FeedDataset(out, task, split, size=size, channels=channels, cache=cache, cache_dir=cache_dir,
                       questions=questions)


def open_feed(source: str | Path, task: TaskName | str, split: str, *,
              size: int | tuple[int, int] | None = None, channels: Channels | str = Channels.RGB,
              questions: int | None = None) -> FeedDataset:
    """The feed of ``task`` / ``split`` from a dataset folder (its decoded cache built or reused), or from a folder
    of exported caches (``holds_exports``): what the trainers read."""
    if holds_exports(source):
        return exported_feed(exported_file(source, task, split), size=size, channels=channels, questions=questions)
    return feed_dataset(source, task, split, size=size, channels=channels, questions=questions)


def _stack(values: list) -> torch.Tensor:
    """Equal-shaped arrays (or numpy scalars) stacked by numpy into one tensor; in a DataLoader worker straight into
    shared memory, as ``default_collate`` does, so the batch reaches the main process without another copy."""
    first = np.asarray(values[0])
    shape = (len(values), *first.shape)
    if get_worker_info() is None:
        return torch.from_numpy(np.stack(values))
    out = torch.empty(shape, dtype=torch.from_numpy(first).dtype).share_memory_()
    np.stack(values, out=out.numpy())
    return out


def collate(items: list[dict]) -> dict:
    """A batch of feed items: what ``default_collate`` gives (arrays stacked into tensors, strings into lists), built
    by numpy, so no tensor operation of torch's intra-op thread pool runs (in the main process it spins; DataLoader
    workers run one thread)."""
    return {key: [item[key] for item in items] if isinstance(value, str) else _stack([item[key] for item in items])
            for key, value in items[0].items()}


def to_device(batch: dict, device: torch.device | str) -> dict:
    """A collated feed batch on ``device``: tensors moved (non-blocking when pinned), uint8 images made float32 in
    [0, 1] there (the same values as ``spare_gen.data.loaders.to_unit_float``); other values as they are."""
    device = torch.device(device)
    out = {}
    for key, value in batch.items():
        if isinstance(value, torch.Tensor):
            value = value.to(device, non_blocking=value.is_pinned())
            if value.dtype == torch.uint8:  # a true division by a device tensor, never a reciprocal multiply
                value = value.to(torch.float32).div_(torch.full((), 255.0, device=device))
        out[key] = value
    return out


def legacy_inputs(batch: dict) -> torch.Tensor:
    """``spare_gen.data.torch``'s ``inputs`` from a device batch: (B, K, 12, H, W) with candidates (F, R, T and
    each candidate), else (B, C, H, W) (the views, then any extra drawing)."""
    inputs = batch["views"]
    if "drawing" in batch:
        inputs = torch.cat([inputs, batch["drawing"]], dim=1)
    if "candidates" not in batch:
        return inputs
    candidates = batch["candidates"]
    return torch.cat([inputs.unsqueeze(1).expand(-1, candidates.shape[1], -1, -1, -1), candidates], dim=2)
