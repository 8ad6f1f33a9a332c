"""Config validation: bad values stop before any work with exit code 2 and a one-line error naming the key."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from spare_gen.config import ConfigError, load_config
from spare_gen.config.schema import Config, HlrMethod, ModelReuse, ModelSource, TaskName
from tests.conftest import REPO, spare_gen_cli


@pytest.mark.parametrize(
    "override, words",
    [
        ("render.size=8", ["render.size", "8", "greater than or equal to 32"]),
        ("render.sizee=256", ["unknown key 'render.sizee'", "size", "margin"]),
        ("render.hlr=fast", ["render.hlr", "'fast'", "auto, exact, poly"]),
        ("models.source=web", ["models.source", "csg, files"]),
        ("models.csg.primitive_counts=[2,0]", ["models.csg.primitive_counts.1", "greater than or equal to 1"]),
        ("runner.timeout_s=-1", ["runner.timeout_s", "greater than 0"]),
        ("seed=abc", ["seed", "'abc'", "integer"]),
        ("questions.counts.pose_2_iso=3", ["questions.counts.pose_2_iso", "three_view_to_isometric"]),
    ],
)
def test_bad_value_names_key_and_allowed_values(override, words):
    with pytest.raises(ConfigError) as info:
        load_config(REPO / "configs" / "default.toml", [override])
    message = str(info.value)
    assert "\n" not in message
    for w in words:
        assert w in message, (w, message)


def test_shipped_configs_are_valid():
    for name in ("try", "default", "spare3d_csg", "spare3d_csg_original", "spare3d_i2p_small", "abc"):
        cfg = load_config(REPO / "configs" / f"{name}.toml")
        assert cfg.render.size == 200
    paper = load_config(REPO / "configs" / "spare3d_csg.toml")
    assert paper.models.csg.count == 12000 and paper.models.csg.primitive_counts == [2, 3, 4]
    # the paper's 5,000 three-view-to-isometric questions; every model used once, with a margin for rejected models
    assert paper.questions.counts[TaskName.THREE_VIEW_TO_ISOMETRIC] == 5000
    assert sum(paper.questions.counts.values()) <= 0.95 * paper.models.csg.count


def test_overrides_parse_toml_literals():
    cfg = load_config(None, ["render.size=256", "models.csg.primitive_counts=[3]", 'out="x/y"', "render.png=false"])
    assert (cfg.render.size, cfg.models.csg.primitive_counts, cfg.out, cfg.render.png) == (256, [3], "x/y", False)


def test_cli_bad_config_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "run"
    proc = spare_gen_cli("run", "--out", str(out), "--set", "render.size=99999")
    assert proc.returncode == 2
    assert "render.size" in proc.stderr and "less than or equal to 4096" in proc.stderr
    assert not out.exists()
    bad = tmp_path / "bad.toml"
    bad.write_text("[render]\nsize = 'big'\n")
    proc = spare_gen_cli("run", "-c", str(bad), "--out", str(out))
    assert proc.returncode == 2 and "bad.toml" in proc.stderr and "render.size" in proc.stderr
    assert not out.exists()
    proc = spare_gen_cli("run", "-c", str(tmp_path / "missing.toml"))
    assert proc.returncode == 2 and "missing.toml" in proc.stderr


@pytest.mark.parametrize(
    "override, words",
    [
        ("questions.split=[nan, nan, nan]", ["questions.split", "nan", "finite number"]),
        ("pool.corner_threshold=inf", ["pool.corner_threshold", "inf", "finite number"]),
        ("questions.duplicate_tolerance_px=inf", ["questions.duplicate_tolerance_px", "finite number"]),
        ("models.files.max_mb=inf", ["models.files.max_mb", "finite number"]),
        ('render.size="256"', ["render.size", "'256'", "valid integer"]),
        ("render.sise=256", ["unknown key 'render.sise'", "did you mean 'render.size'?"]),
        ("models.csg.primitive_counts=" + "[" * 600 + "]" * 600, ["models.csg.primitive_counts", "nested more than"]),
        ("render.size=256\nrender.png=false", ["render.size=256\\nrender.png=false", "one line"]),
    ],
)
def test_non_finite_string_typed_deep_and_multi_line_overrides_are_one_line_naming_the_key(override, words):
    with pytest.raises(ConfigError) as info:
        load_config(REPO / "configs" / "default.toml", [override])
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    for w in words:
        assert w in message, (w, message)


def test_a_recipe_nested_500_deep_is_one_line_and_exit_2(tmp_path):
    deep = tmp_path / "deep.toml"
    deep.write_text("seed = " + "[" * 500 + "]" * 500 + "\n")
    proc = spare_gen_cli("config", "-c", str(deep))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == f"spare-gen: config error in {deep}: arrays or tables nested more than 32 deep"
    proc = spare_gen_cli("run", "--out", str(tmp_path / "out"), "--set", "questions.split=[nan, nan, nan]")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "questions.split" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_200_level_dotted_key_is_one_line_and_exit_2():
    deep = "a." * 200 + "b=1"
    proc = spare_gen_cli("config", "--set", deep)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith("spare-gen: --set 'a.a.a.") and "the key has 201 levels, more than 32" in line, line
    assert len(line) < 200
    # a key within the limit holding a value within the limit, which together nest too deep: the same kind of line
    proc = spare_gen_cli("config", "--set", "a." * 20 + "b=" + "[" * 20 + "]" * 20)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "its key and value nest more than 32 deep" in proc.stderr


def test_an_undecodable_byte_or_a_5000_digit_integer_on_the_command_line_is_one_line_and_exit_2(tmp_path):
    # "caf\xe9" as the command line's bytes: Python hands it on as the surrogate \udce9 (os.fsdecode)
    proc = spare_gen_cli("run", "--out", str(tmp_path / "out"), "--set", "card.pretty_name=caf\udce9")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "card.pretty_name=caf\\udce9" in proc.stderr and "not UTF-8" in proc.stderr
    proc = spare_gen_cli("config", "--set", "seed=" + "9" * 5000)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "--set 'seed=999" in proc.stderr and "5000 digits" in proc.stderr and len(proc.stderr) < 300
    assert not (tmp_path / "out").exists()


def test_a_rule_of_the_whole_config_is_one_line_naming_its_keys():
    with pytest.raises(ConfigError) as info:
        load_config(None, ['questions.symmetry_filter="spare3d"', "render.png=false"])
    assert str(info.value) == ("config error in defaults: questions.symmetry_filter = 'spare3d' scores the F, R, T "
                               "PNGs: it needs render.png = true")


def _schema_keys(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        keys.append(".".join((*prefix, name)))
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            keys += _schema_keys(field.annotation, (*prefix, name))
    return keys


SCHEMA_KEYS = sorted(_schema_keys(Config) + [f"questions.counts.{t.value}" for t in TaskName])
ENUM_VALUES = sorted({m.value for enum in (ModelSource, HlrMethod, ModelReuse, TaskName) for m in enum})
_segment = st.one_of(st.sampled_from(["a", "seed", "render", "size", "counts", "[key]", "0", "", " "]),
                     st.text(max_size=6))
_keys = st.one_of(
    st.sampled_from(SCHEMA_KEYS),
    st.lists(_segment, max_size=250).map(".".join),  # as deep as the 200-level key and deeper
    st.tuples(st.sampled_from(SCHEMA_KEYS), st.lists(_segment, min_size=1, max_size=4)).map(
        lambda kv: ".".join([kv[0], *kv[1]])),  # below a real key
)


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"


_literals = st.recursive(
    st.one_of(st.integers(), st.integers(min_value=-2**200, max_value=2**200), st.floats(), st.booleans(),
              st.text(max_size=8), st.sampled_from(ENUM_VALUES)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "size", "isometric_to_pose"]), inner, max_size=3)),
    max_leaves=8,
).map(_toml)
_values = st.one_of(
    _literals,
    st.sampled_from(ENUM_VALUES),  # bare words: a plain string
    st.text(st.characters(codec=None, categories=None), max_size=20),  # surrogates (undecodable bytes) included
    st.sampled_from(["[" * 40 + "]" * 40, "{a={a={a=1}}}", "1979-05-27", "07:32:00", "0x10", "1_000", "9" * 5000]),
)
_assignments = st.one_of(st.tuples(_keys, _values).map("=".join), st.text(max_size=30))


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(_assignments, min_size=1, max_size=3))
def test_any_set_strings_give_a_resolved_config_or_one_config_error_line(assignments):
    try:
        config = load_config(None, assignments)
    except ConfigError as exc:  # the loader's own error: one line, short enough to read
        assert "\n" not in str(exc) and len(str(exc)) < 2000, str(exc)
    else:
        assert isinstance(config, Config)


def _every_file(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``root``, bookkeeping included: (sha256, mtime in ns)."""
    return {p.relative_to(root).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


ONE_TASK = ["--set", "questions.counts={point_cloud_generation = 2, three_view_to_isometric = 0, "
                     "isometric_to_pose = 0, pose_to_isometric = 0, isometric_view_generation = 0}"]
QUICK = ["--no-progress", "--workers", "1", "--set", "runner.dashboard=false", "--set", "pool.enabled=false"]


def test_a_count_no_input_can_meet_is_refused_before_any_work_and_a_finished_dataset_keeps_every_file(tmp_path):
    out = tmp_path / "out"
    small = ["run", "--out", str(out), *QUICK, "--set", "models.csg.count=4", "--set", "questions.allow_fewer=true"]
    first = spare_gen_cli(*small, *ONE_TASK)
    assert first.returncode == 0, first.stderr
    questions = sorted(p.relative_to(out).as_posix() for p in (out / "questions").rglob("*.parquet"))
    assert "questions/point_cloud_generation/train.parquet" in questions
    before = _every_file(out)
    huge = "questions.counts.isometric_to_pose=4611686018427387904"  # with allow_fewer this once emptied the dataset
    proc = spare_gen_cli(*small, *ONE_TASK, "--set", huge)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines() == [
        "spare-gen: config error: questions.counts.isometric_to_pose = 4611686018427387904 cannot be met: the inputs "
        "give at most 4 questions in all tasks together (models.csg.count = 4; each model serves one question, "
        "questions.model_reuse = 'once'); lower the counts, give more models or set questions.model_reuse = "
        "'per_task'"]
    assert _every_file(out) == before  # nothing written, nothing removed, not even the run record
    # 10**12 once gave 15 questions; within one task with reuse it is the same line, per task
    proc = spare_gen_cli(*small, *ONE_TASK, "--set", "questions.counts.isometric_to_pose=1000000000000",
                         "--set", 'questions.model_reuse="per_task"')
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "questions.counts.isometric_to_pose = 1000000000000 cannot be met: the inputs give at most 4 questions " \
           "per task (models.csg.count = 4;" in proc.stderr
    # counts that are each within the bound but together are not
    proc = spare_gen_cli(*small, "--set", "questions.counts={point_cloud_generation = 3, three_view_to_isometric = 2, "
                         "isometric_to_pose = 0, pose_to_isometric = 0, isometric_view_generation = 0}")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "questions.counts = {three_view_to_isometric = 2, point_cloud_generation = 3} (5 in all) cannot be met: " \
           "the inputs give at most 4 questions in all tasks together" in proc.stderr
    assert _every_file(out) == before
    # an integer past 64 bits is refused by the config itself, for every command
    proc = spare_gen_cli("config", "--set", f"questions.counts.isometric_to_pose={2**64}")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert f"questions.counts.isometric_to_pose = {2**64}: input should be less than or equal to {2**63 - 1}" \
        in proc.stderr


def test_a_files_source_bounds_the_counts_by_the_files_it_lists_and_its_limit(tmp_path, real_cad):
    out = tmp_path / "out"
    files = ["run", "--out", str(out), *QUICK, "--set", 'models.source="files"',
             "--set", f'models.files.root="{real_cad}"']
    proc = spare_gen_cli(*files, "--set", "models.files.limit=3", *ONE_TASK,
                         "--set", "questions.counts.pose_to_isometric=2")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    cad_files = len([p for p in real_cad.iterdir() if p.suffix != ".md"])
    assert f"(4 in all) cannot be met: the inputs give at most 3 questions in all tasks together (models.files.root " \
           f"{str(real_cad)!r} holds {cad_files} CAD file(s), models.files.limit = 3;" in proc.stderr
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(real_cad / "io1-ug-214.stp", one / "io1-ug-214.stp")
    proc = spare_gen_cli("run", "--out", str(out), *QUICK, "--set", 'models.source="files"',
                         "--set", f'models.files.root="{one}"', "--set", "questions.counts.pose_to_isometric=100",
                         "--stages", "models")
    assert proc.returncode == 0, proc.stderr  # no question stage in this run: its counts do not matter
    assert (out / "models.parquet").is_dir() and not (out / "questions").exists()


@pytest.mark.parametrize("assignment", ["=" + "9" * 5000, "x" * 5000, "render" + ".x" * 40 + "=" + "9" * 5000,
                                        "models=1", "a.b.c=" + "9" * 5000])
def test_a_set_string_of_thousands_of_characters_is_one_short_error_line(assignment):
    """Every error of ``--set`` shows a long assignment by its two ends (an empty key with a 5,000-digit value was
    quoted whole: 5,020 characters)."""
    with pytest.raises(ConfigError) as err:
        load_config(None, ["models.csg.count=10", assignment])
    assert "\n" not in str(err.value) and len(str(err.value)) < 400, str(err.value)
