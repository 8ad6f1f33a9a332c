"""Config validation: bad values stop before any work with exit code 2 and a one-line error naming the key."""

from __future__ import annotations

import pytest

from spare_gen.config import ConfigError, load_config
from spare_gen.config.schema import TaskName
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
    for name in ("default", "spare3d_csg", "spare3d_csg_original", "spare3d_i2p_small", "abc"):
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
