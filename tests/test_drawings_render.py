"""SVG and PNG from the same polylines: structure, fixed stroke widths, agreement, determinism."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image
from scipy.ndimage import binary_dilation

from drawings_shapes import HOLED_BOX, L_BLOCK, program, prim, render_config, scaled, write_model
from spare_gen.canvas.raster import dash_polyline, ink_fraction, png_bytes, rasterize
from spare_gen.stages.drawings.child import draw_model
from spare_gen.canvas.svg import svg_document
from spare_gen.stages.models.csg import random_program
from spare_gen.rng import derive_rng

SVG_NS = "{http://www.w3.org/2000/svg}"
INK = 250  # any visible ink; a mid-grey threshold flips whole thin lines on 1-level rounding differences


def draw(folder, prog, name, **render):
    path = write_model(prog, folder, name)
    return draw_model(name, path, str(folder), render_config(**render), None, "exact")


def png_array(path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"))


def test_svg_structure_and_stroke_widths(tmp_path):
    result = draw(tmp_path, HOLED_BOX, "holed")
    root = ET.parse(tmp_path / "drawings" / "holed" / "t.svg").getroot()
    assert root.get("viewBox") == "0 0 200 200"
    groups = [g for g in root.iter(f"{SVG_NS}g") if g.get("id")]
    assert [g.get("id") for g in groups] == ["hidden", "visible"]  # hidden drawn first, underneath
    hidden, visible = groups
    assert (hidden.get("stroke"), hidden.get("stroke-width")) == ("#ff0000", "0.35")
    assert (visible.get("stroke"), visible.get("stroke-width")) == ("#000000", "0.7")
    row = next(r for r in result["views"] if r["view"] == "t")
    assert len(hidden.findall(f"{SVG_NS}path")) == row["n_hidden"] == 2
    assert len(visible.findall(f"{SVG_NS}path")) == row["n_visible"]
    first = visible.find(f"{SVG_NS}path").get("d")
    assert first.startswith("M") and all(len(n.split(".")[1]) == 2 for n in first[1:].replace("L", " ").split())


def test_dashed_grey_style(tmp_path):
    draw(tmp_path, HOLED_BOX, "holed", hidden_style="dashed_grey")
    root = ET.parse(tmp_path / "drawings" / "holed" / "t.svg").getroot()
    hidden = next(g for g in root.iter(f"{SVG_NS}g") if g.get("id") == "hidden")
    assert hidden.get("stroke") == "#808080" and hidden.get("stroke-dasharray") == "2,1.5"
    img = png_array(tmp_path / "drawings" / "holed" / "t.png")
    assert not (img[..., 0] > 200)[(img[..., 1] < 100)].any()  # no red ink anywhere


def _models():
    progs = [L_BLOCK, HOLED_BOX, program([prim("torus", {"R": 1.0, "r": 0.3}, "x", 90)])]
    progs += [random_program(n, derive_rng(0, "test-drawings", n)) for n in (2, 3, 4)]
    return progs


def test_png_agrees_with_svg_rendered_by_cairosvg(tmp_path):
    import cairosvg  # test-only dependency (pyproject [test])
    ious = []
    for i, prog in enumerate(_models()):
        try:
            result = draw(tmp_path, prog, f"m{i}")
        except Exception:  # a random program whose boolean fails: not this test's concern
            continue
        for row in result["views"]:
            mine = png_array(tmp_path / row["png"]).min(axis=2) < INK
            ref = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(url=str(tmp_path / row["svg"])))).convert("RGB"))
            theirs = ref.min(axis=2) < INK
            a, b = binary_dilation(mine), binary_dilation(theirs)
            ious.append((a & b).sum() / max((a | b).sum(), 1))
    assert len(ious) >= 4 * 11
    print(f"IoU min {min(ious):.3f} median {np.median(ious):.3f} over {len(ious)} views")
    assert min(ious) >= 0.9, f"worst IoU {min(ious):.3f}"


def test_stroke_width_is_fixed_in_pixels(tmp_path):
    small = draw(tmp_path, L_BLOCK, "mm1")  # L_BLOCK is 4 units long; scale it to 1 and 1000
    big = draw(tmp_path, scaled(L_BLOCK, 250.0), "mm1000")
    assert big["model"]["scale"] == pytest.approx(small["model"]["scale"] / 250.0)
    for a, b in zip(small["views"], big["views"]):
        pa, pb = png_array(tmp_path / a["png"]), png_array(tmp_path / b["png"])
        diff = np.abs(pa.astype(int) - pb.astype(int))
        assert (diff > 8).mean() < 0.001, a["view"]
        assert a["ink_fraction"] == pytest.approx(b["ink_fraction"], rel=0.02)


def test_same_model_twice_gives_identical_bytes(tmp_path):
    one = draw(tmp_path / "a", L_BLOCK, "m")
    two = draw(tmp_path / "b", L_BLOCK, "m")
    for a, b in zip(one["views"], two["views"]):
        assert (tmp_path / "a" / a["svg"]).read_bytes() == (tmp_path / "b" / b["svg"]).read_bytes()
        assert (tmp_path / "a" / a["png"]).read_bytes() == (tmp_path / "b" / b["png"]).read_bytes()
        assert a["png_sha256"] == b["png_sha256"] and a["visible"] == b["visible"]


def test_thin_lines_stay_visible_and_png_decodes():
    layer = ([np.array([[10.3, 20.0], [90.7, 20.0]]), np.array([[5.0, 5.0], [60.0, 80.0]])], (255, 0, 0), 0.35, None)
    img = rasterize([layer], 100)
    assert img.shape == (100, 100, 3) and img.dtype == np.uint8
    row = img[19:21, 12:88]  # the horizontal line straddles rows 19 and 20
    assert (row[..., 1] < 255).all() and (row[..., 0] == 255).all()  # red-ish ink along its whole length
    assert 0.0 < ink_fraction(img) < 0.05
    decoded = np.asarray(Image.open(io.BytesIO(png_bytes(img))).convert("RGB"))
    np.testing.assert_array_equal(decoded, img)


def test_layers_are_generic_over_tuples():
    layers = [([np.array([[0.0, 0.0], [10.0, 10.0]])], (0, 128, 0), 1.5, None)]
    svg = svg_document(layers, (40, 30))
    assert 'viewBox="0 0 40 30"' in svg and 'stroke="#008000"' in svg and 'stroke-width="1.5"' in svg
    assert rasterize(layers, (40, 30)).shape == (30, 40, 3)


def test_dash_pattern_restarts_at_each_polyline():
    pieces = dash_polyline(np.array([[0.0, 0.0], [5.0, 0.0]]), (2.0, 1.0))
    np.testing.assert_allclose([p[[0, -1], 0] for p in pieces], [[0, 2], [3, 5]])
    corner = dash_polyline(np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 3.0]]), (2.0, 1.0))
    np.testing.assert_allclose(corner[0], [[0, 0], [1, 0], [1, 1]])  # dashes follow the corner
    np.testing.assert_allclose(corner[1], [[1, 2], [1, 3]])
