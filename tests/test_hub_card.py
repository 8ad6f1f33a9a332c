"""Hugging Face native: the card's YAML header declares one configuration per task, and `datasets` loads each."""

from __future__ import annotations

import json

import pytest
import yaml

from spare_gen.config import load_config
from spare_gen.config.schema import SPARE3D_CITATION, TaskName
from spare_gen.card.dataset import CARD_NAME, card_text
from spare_gen.stages.questions.schema import QuestionsSummary

HF_SPLITS = ("train", "validation", "test")
IMAGE_COLUMNS = {
    TaskName.THREE_VIEW_TO_ISOMETRIC: ("front_png", "candidate_png"),
    TaskName.ISOMETRIC_TO_POSE: ("front_png", "iso_png"),
    TaskName.POSE_TO_ISOMETRIC: ("top_png", "candidate_png"),
    TaskName.ISOMETRIC_VIEW_GENERATION: ("right_png", "target_png"),
    TaskName.POINT_CLOUD_GENERATION: ("front_png",),
}


def _header(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


@pytest.fixture(scope="module")
def hf_env(tmp_path_factory):
    import os

    cache = tmp_path_factory.mktemp("hf_cache")
    old = {k: os.environ.get(k) for k in ("HF_DATASETS_CACHE", "HF_HUB_OFFLINE", "HF_HOME")}
    os.environ.update(HF_DATASETS_CACHE=str(cache), HF_HUB_OFFLINE="1", HF_HOME=str(cache / "home"))
    yield cache
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def test_card_header_declares_every_task_split_license_and_categories(tiny_dataset):
    card = (tiny_dataset / CARD_NAME).read_text()
    header = _header(card)
    assert header["license"] == "cc-by-4.0" and "multiple-choice" in header["task_categories"]
    assert header["size_categories"] == ["n<1K"]
    configs = {c["config_name"]: c for c in header["configs"]}
    for task in TaskName:
        files = {f["split"]: f["path"] for f in configs[task.value]["data_files"]}
        assert files == {s: f"hf/{task.value}/{s}.parquet" for s in HF_SPLITS}
        raw = {f["split"]: f["path"] for f in configs[f"{task.value}_paths"]["data_files"]}
        assert raw["validation"] == f"questions/{task.value}/val.parquet"  # the files keep their names
        assert all((tiny_dataset / p).is_file() for p in [*files.values(), *raw.values()])
    assert sum(bool(c.get("default")) for c in header["configs"]) == 1
    assert "## Citation" in card and "han2020spare3d" in card and SPARE3D_CITATION.splitlines()[1] in card
    assert "## Corrupted-wireframe pool" in card and "## Example images" in card
    assert "![pose_to_isometric](preview/pose_to_isometric.png)" in card
    assert (tiny_dataset / "preview" / "pose_to_isometric.png").is_file()


def test_card_keys_from_the_config(tiny_dataset):
    summary = QuestionsSummary.read(tiny_dataset / "questions" / "summary.json")
    config = load_config(None, ['card.license="mit"', 'card.citation="@misc{mine, title={Mine}}"'])
    card = card_text(config, summary, tiny_dataset)
    assert _header(card)["license"] == "mit"
    assert "@misc{mine, title={Mine}}" in card and "han2020spare3d" in card


@pytest.mark.parametrize("task", list(TaskName), ids=lambda t: t.value)
def test_load_dataset_loads_every_task_with_image_features(tiny_dataset, hf_env, tmp_path, monkeypatch, task):
    from datasets import Image, List, load_dataset

    monkeypatch.chdir(tmp_path)  # images must load from anywhere, not only from the dataset folder
    ds = load_dataset(str(tiny_dataset), task.value)
    assert set(ds) == set(HF_SPLITS)
    produced = json.loads((tiny_dataset / "questions" / "summary.json").read_text())["produced"][task.value]
    assert {s: len(ds[s]) for s in HF_SPLITS} == {"train": produced["train"], "validation": produced["val"],
                                                   "test": produced["test"]}
    features = ds["train"].features
    for col in IMAGE_COLUMNS[task]:
        assert features[col] == Image() or features[col] == List(Image()), (col, features[col])
    item = ds["test"][0]
    first = item[IMAGE_COLUMNS[task][-1]]
    image = first[0] if isinstance(first, list) else first
    assert image.size == (200, 200) and image.getextrema() != ((255, 255), (255, 255), (255, 255))
    assert item["question_id"].startswith(f"{task.value}-test-")
    raw = load_dataset(str(tiny_dataset), f"{task.value}_paths")
    assert {s: len(raw[s]) for s in HF_SPLITS} == {s: len(ds[s]) for s in HF_SPLITS}
    assert isinstance(raw["train"][0]["front_png"], str)
