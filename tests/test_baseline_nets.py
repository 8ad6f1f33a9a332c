"""SPARE3D's baselines: published parameter counts, the supplementary's recipes, and every cell learns a batch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from spare_gen.baseline.options import FIGURE6, Arch, Formulation, TrainOptions, recipe
from spare_gen.config.schema import TaskName
from tests.conftest import REPO

T3, I2P, P2I = TaskName.THREE_VIEW_TO_ISOMETRIC, TaskName.ISOMETRIC_TO_POSE, TaskName.POSE_TO_ISOMETRIC
BIN, MET, MC = Formulation.BINARY, Formulation.METRIC, Formulation.MULTICLASS
VGG, RES, BAG = Arch.VGG16, Arch.RESNET50, Arch.BAGNET33

# Typed from the supplementary (section C) and Figure 6's SPARE3D-CSG bars, independently of the code's table:
# (task, formulation, arch): (learning rate, batch size, epochs, paper test accuracy %).
SUPPLEMENTARY = {
    (T3, BIN, RES): (0.00005, 9, 50, 68.7), (T3, BIN, VGG): (0.00005, 20, 50, 78.1),
    (T3, BIN, BAG): (0.0001, 8, 49, 49.4),
    (T3, MET, RES): (0.0001, 4, 50, 37.7), (T3, MET, VGG): (0.00002, 9, 50, 28.9),  # printed "g"
    (T3, MET, BAG): (0.0001, 4, 50, 40.8),
    (I2P, MC, RES): (0.00002, 70, 50, 80.4), (I2P, MC, VGG): (0.00002, 80, 50, 87.5),
    (I2P, MC, BAG): (0.00002, 30, 50, 71.9),
    (P2I, BIN, RES): (0.00002, 9, 50, 27.4), (P2I, BIN, VGG): (0.0001, 30, 50, 27.8),
    (P2I, BIN, BAG): (0.00005, 8, 50, 26.5),
    (P2I, MET, RES): (0.00001, 4, 47, 27.8), (P2I, MET, VGG): (0.000005, 10, 42, 27.1),
    (P2I, MET, BAG): (0.0001, 4, 41, 26.8),
}


@pytest.mark.parametrize("cell", sorted(SUPPLEMENTARY, key=str), ids=lambda c: "-".join(x.value for x in c))
def test_every_figure6_recipe_has_the_supplementarys_values(cell):
    r = recipe(*cell)
    assert (r.lr, r.batch_size, r.epochs, r.paper_test) == SUPPLEMENTARY[cell]
    assert r.source.startswith("supplementary C.")


def test_the_recipe_table_is_figure6_and_nothing_else():
    assert sorted(((r.task, r.formulation, r.arch) for r in FIGURE6), key=str) == sorted(SUPPLEMENTARY, key=str)
    assert len({r.name for r in FIGURE6}) == 15 and recipe(I2P, MC, VGG).name == "isometric_to_pose/multiclass/vgg16"


def test_recipe_values_are_the_defaults_and_each_can_be_overridden():
    o = TrainOptions(arch=Arch.VGG16).resolved(I2P)
    assert (o.formulation, o.lr, o.batch_size, o.epochs, o.size) == (MC, 0.00002, 80, 50, 200)
    o = TrainOptions(arch=Arch.BAGNET33, formulation=MET, lr=0.5, epochs=3, size=48).resolved(P2I)
    assert (o.lr, o.batch_size, o.epochs, o.size) == (0.5, 4, 3, 48)
    with pytest.raises(ValueError, match="isometric_to_pose is trained as multiclass"):
        TrainOptions(formulation=BIN).resolved(I2P)
    with pytest.raises(ValueError, match="use at least 33"):
        TrainOptions(arch=Arch.BAGNET33, size=32).resolved(I2P)


# Parameter counts from the published layer shapes: torchvision's vgg16 / resnet50, bagnets' bagnet33, with
# SPARE3D's first convolution (VGG, ResNet: 3x3 with bias; BagNet: 1x1 without) and last linear replaced.
def conv(cin: int, cout: int, k: int, bias: bool = False) -> int:
    return cin * cout * k * k + (cout if bias else 0)


def linear(fin: int, fout: int) -> int:
    return fin * fout + fout


def vgg16(cin: int, out: int) -> int:
    total, prev = 0, cin
    for v in (64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512):
        total, prev = total + conv(prev, v, 3, bias=True), v
    return total + linear(512 * 7 * 7, 4096) + linear(4096, 4096) + linear(4096, out)


def bottlenecks(bagnet: bool) -> int:
    total, inplanes = 0, 64
    for planes, blocks in zip((64, 128, 256, 512), (3, 4, 6, 3)):
        for i in range(blocks):
            k = 3 if (i == 0 or not bagnet) else 1
            cin = inplanes if i == 0 else planes * 4
            total += conv(cin, planes, 1) + conv(planes, planes, k) + conv(planes, planes * 4, 1)
            total += 2 * (planes + planes + planes * 4)  # three batch norms
            if i == 0:
                total += conv(inplanes, planes * 4, 1) + 2 * planes * 4  # projected shortcut and its batch norm
        inplanes = planes * 4
    return total


def resnet50(cin: int, out: int, first=None) -> int:
    return (first if first is not None else conv(cin, 64, 3, bias=True)) + 2 * 64 + bottlenecks(False) \
        + linear(2048, out)


def bagnet33(cin: int, out: int) -> int:
    return conv(cin, 64, 1) + conv(64, 64, 3) + 2 * 64 + bottlenecks(True) + linear(2048, out)


BACKBONE = {VGG: vgg16, RES: resnet50, BAG: bagnet33}


def expected(task: TaskName, formulation: Formulation, arch: Arch) -> int:
    f = BACKBONE[arch]
    if formulation is MC:
        return f(12, 4)
    if formulation is BIN:
        return f(12, 1) if task is T3 else f(12, 128) + linear(128 + 8, 1)
    if task is T3:
        return f(9, 128) + f(3, 128)
    return f(9, 128) + linear(128 + 8, 50) + f(3, 50)


def test_the_derivation_gives_torchvisions_published_imagenet_totals():
    assert vgg16(3, 1000) == 138_357_544  # torchvision's vgg16
    assert resnet50(3, 1000, first=conv(3, 64, 7)) == 25_557_032  # torchvision's resnet50


@pytest.mark.parametrize("cell", sorted(SUPPLEMENTARY, key=str), ids=lambda c: "-".join(x.value for x in c))
def test_parameter_counts_equal_the_published_definitions(cell):
    torch = pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

    from spare_gen.baseline.nets import make_model

    task, formulation, arch = cell
    with torch.device("meta"):  # shapes only: no memory, no initialisation cost
        model = make_model(formulation, arch, with_pose=task is P2I)
    assert sum(p.numel() for p in model.parameters()) == expected(*cell)


def _loaded_after(imports: str, roots: tuple[str, ...]) -> list[str]:
    code = (f"import json, sys\nimport {imports}\n"
            f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(roots)!r})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_options_and_the_command_line_import_without_torch_and_training_without_ocp_or_dask():
    assert _loaded_after("spare_gen.baseline.options, spare_gen.cli.options.train_baseline, spare_gen.baseline.figure6",
                         ("torch", "OCP", "dask")) == []
    assert _loaded_after("spare_gen.baseline.train, spare_gen.baseline.nets", ("OCP", "dask", "distributed")) == []


# What a GPU machine with torch, numpy, pandas, pyarrow, pillow and scipy lacks of spare_gen's install (the generator's
# packages). Training reads a dataset that was generated elsewhere, so it must import none of them. pydantic is not
# listed: the task registry (``spare_gen.stages.questions.tasks``) still imports the config schema, so it travels as
# wheels to such a machine (benchmarks/README.md, "GPU: Figure 6 cells").
GENERATOR_ONLY = ("OCP", "dask", "distributed", "trimesh", "aggdraw", "starlette", "uvicorn", "bokeh")


def test_the_training_command_and_the_figure6_pipeline_import_no_generator_package():
    # spare_gen.cli.common is what pipelines/reproduce_spare3d_figure6.py and `spare-gen train-baseline` import; it
    # imported the main job (and through the pool stage aggdraw) at the top before
    assert _loaded_after("spare_gen.cli.common, spare_gen.cli.train_baseline, spare_gen.baseline.train, "
                         "spare_gen.baseline.figure6", GENERATOR_ONLY) == []


def test_every_train_option_is_on_the_command_line_with_its_default_shown():
    import argparse
    import dataclasses

    from spare_gen.cli.options.train_baseline import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    by_dest = {a.dest: a for a in p._actions}
    for f in dataclasses.fields(TrainOptions):
        action = by_dest[f.name]
        assert "default" in action.help, f.name
    assert by_dest["arch"].choices == ["small", "vgg16", "resnet50", "bagnet33", "hypotheses"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from synthetic_dataset import make_dataset

    return make_dataset(tmp_path_factory.mktemp("nets") / "out", split_sizes={"train": 4, "val": 2, "test": 2})


LEARN_SIZE = 36  # bagnet33 needs 33 px; small enough for a few CPU steps of VGG-16 per cell


@pytest.mark.parametrize("cell", sorted(SUPPLEMENTARY, key=str) + [(T3, BIN, Arch.SMALL), (I2P, MC, Arch.SMALL)],
                         ids=lambda c: "-".join(x.value for x in c))
def test_a_few_steps_with_the_recipes_learning_rate_lower_the_loss_on_a_tiny_batch(tiny, cell):
    torch = pytest.importorskip("torch")  # the optional `torch` extra; CI installs it

    from spare_gen.baseline.train import Resident, loss_of, task_model
    from spare_gen.data.feed import feed_dataset

    task, formulation, arch = cell
    options = TrainOptions(arch=arch, formulation=formulation, size=LEARN_SIZE).resolved(task)
    torch.manual_seed(0)
    feed = feed_dataset(tiny, task, "train", size=LEARN_SIZE, cache=False)
    model = task_model(task, options, feed.n_choices)
    batch = Resident(feed, torch.device("cpu")).batch(torch.arange(2))
    optimiser = torch.optim.Adam(model.parameters(), lr=options.lr)

    def loss() -> torch.Tensor:
        torch.manual_seed(1)  # the same dropout masks at every look
        return loss_of(formulation, model(batch), batch["answer"])

    model.train()
    with torch.no_grad():
        before = float(loss())
    for _ in range(2):
        optimiser.zero_grad()
        loss().backward()
        optimiser.step()
    with torch.no_grad():
        after = float(loss())
    assert after < before, (before, after)
