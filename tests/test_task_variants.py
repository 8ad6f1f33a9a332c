"""A task is its module, variants included: nothing outside ``stages/questions/tasks/`` names a task, the spec a run uses
follows its variant (a five-pose set gives five answers, balanced), and validate checks each row's own choice count.

The variant tests register a throw-away five-pose set for isometric_to_pose at runtime (under an existing
``PoseChoices`` name: an enum cannot grow at runtime) and make a real tiny CSG dataset through the real stages, on an
in-process Dask cluster so that the registration reaches the workers.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spare_gen.config import load_config
from spare_gen.config.schema import QuestionsConfig, TaskName
from spare_gen.config.tasks.isometric_to_pose import PoseChoices
from spare_gen.jobs.regenerate import run
from spare_gen.stages.questions.tasks import TASK_SPECS, task_spec
from spare_gen.config.tasks import isometric_to_pose as pose_options
from spare_gen.stages.questions.tasks import isometric_to_pose
from spare_gen.validate import validate
from tests.conftest import REPO

TASK_NAMED = re.compile(r"\bTaskName\.[A-Z][A-Z_]*")
# a task's own module imported by name (its aliases, its tables): what the spec declares is read from the registry
TASK_MODULE = re.compile(r"^\s*(?:from|import) spare_gen\.stages\.questions\.tasks\.[a-z_]+", re.M)
# where naming a task member is the point: the registry's modules, the tasks' options and the enum itself
ALLOWED = ("spare_gen/stages/questions/tasks/", "spare_gen/config/tasks/")
SCANNED = ("spare_gen", "pipelines")
FIVE_POSES = (1, 2, 3, 4, 5)
TINY = ["models.csg.count=24", "pool.enabled=false", "questions.allow_fewer=true", "runner.progress=false",
        "runner.dashboard=false", *[f"questions.counts.{t.value}=0" for t in TaskName if t is not TaskName.ISOMETRIC_TO_POSE],
        "questions.counts.isometric_to_pose=10", 'questions.pose_choices="spare3d"']


def test_no_module_outside_the_task_registry_names_a_task_member():
    found = []
    for path in sorted(p for folder in SCANNED for p in (REPO / folder).rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith(ALLOWED):
            continue
        text = path.read_text()
        found += [f"{rel}:{n}: {m.group()}" for n, line in enumerate(text.splitlines(), 1)
                  for m in TASK_NAMED.finditer(line)]
        found += [f"{rel}: {m.group().strip()}" for m in TASK_MODULE.finditer(text)]
    assert not found, "task knowledge outside stages/questions/tasks/ (declare it on the TaskSpec instead):\n" + "\n".join(found)


def test_the_scan_finds_a_planted_task_member():
    assert TASK_NAMED.findall("if task is TaskName.ISOMETRIC_TO_POSE:") == ["TaskName.ISOMETRIC_TO_POSE"]
    planted = "from spare_gen.stages.questions.tasks.isometric_to_pose import TASK as I2P\n"
    assert [m.group() for m in TASK_MODULE.finditer(planted)] == [
        "from spare_gen.stages.questions.tasks.isometric_to_pose"]
    assert not TASK_MODULE.findall("from spare_gen.stages.questions.tasks import TASK_SPECS\n")


def test_the_spec_a_run_uses_has_as_many_answers_as_the_chosen_pose_set(monkeypatch):
    assert task_spec(TaskName.ISOMETRIC_TO_POSE, QuestionsConfig()).n_answers == 4
    monkeypatch.setitem(pose_options.POSE_CHOICE_SETS, PoseChoices.SPARE3D, FIVE_POSES)
    chosen = QuestionsConfig(pose_choices=PoseChoices.SPARE3D)
    assert task_spec(TaskName.ISOMETRIC_TO_POSE, chosen).n_answers == 5
    assert task_spec(TaskName.POSE_TO_ISOMETRIC, chosen) is TASK_SPECS[TaskName.POSE_TO_ISOMETRIC]  # no variants


def _generate(out: Path, stages=("models", "drawings", "questions")) -> Path:
    """A real run of ``stages`` on an in-process cluster (the workers see this process's registrations)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        run(load_config(REPO / "configs" / "default.toml",
                        [f'out="{out}"', *TINY, f'runner.scheduler="{cluster.scheduler_address}"']), stages=stages)
    return out


@pytest.fixture(scope="module")
def five_pose_dataset(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(pose_options.POSE_CHOICE_SETS, PoseChoices.SPARE3D, FIVE_POSES)
        out = _generate(tmp_path_factory.mktemp("five_poses") / "out")
        yield out, validate(out)


def _answers(out: Path) -> dict[str, list]:
    folder = out / "questions" / TaskName.ISOMETRIC_TO_POSE.value
    return {p.stem: pq.read_table(p).to_pylist() for p in sorted(folder.glob("*.parquet"))}


def test_a_throw_away_five_pose_variant_gives_a_valid_dataset_with_five_balanced_answers(five_pose_dataset):
    out, problems = five_pose_dataset
    assert problems == []
    rows = _answers(out)
    assert sum(len(r) for r in rows.values()) >= 8
    assert all(r["choice_poses"] == list(FIVE_POSES) for split in rows.values() for r in split)
    train = [r["answer"] for r in rows["train"]]
    counts = [train.count(k) for k in range(5)]
    assert max(counts) - min(counts) <= 1 and counts[4] >= 1, counts  # the fifth pose is a correct answer too


def test_validate_rejects_a_dataset_whose_answers_skip_a_choice(five_pose_dataset, tmp_path):
    """The issue's silent bug, made for real: five poses offered, answers balanced over the first four only."""
    good, _ = five_pose_dataset
    out = tmp_path / "out"
    shutil.copytree(good, out, symlinks=True)
    shutil.rmtree(out / "questions")
    stale = isometric_to_pose.SPEC  # the answer count of the default set, whatever pose set is chosen
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(pose_options.POSE_CHOICE_SETS, PoseChoices.SPARE3D, FIVE_POSES)
        mp.setitem(TASK_SPECS, TaskName.ISOMETRIC_TO_POSE, dataclasses.replace(stale, variant=None))
        _generate(out, stages=("questions",))
        train = [r["answer"] for r in _answers(out)["train"]]
        assert 4 not in train and len(train) >= 6
        problems = validate(out)
    assert any(p.startswith("answers: isometric_to_pose train: answer counts") and "over 5 choices" in p
               for p in problems), problems
