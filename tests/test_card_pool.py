"""The dataset card's corrupted-pool section: counts by kind and severity, pairs by type, the preview picture."""

from __future__ import annotations

import pyarrow.parquet as pq
from test_pool_pipeline import N_MODELS, N_VARIANTS, run_a  # noqa: F401  (run_a: the module's pool fixture)

from spare_gen.card.dataset import POOL_BEGIN, POOL_END, pool_section, replace_marked
from spare_gen.rating.corruptions import SEVERITIES, get_corruption_names


def test_pool_section_counts_the_pool_and_is_replaced_in_place(run_a):  # noqa: F811
    stale = "---\nlicense: mit\n---\n\n# Card\n\n" + POOL_BEGIN + "\nSTALE TEXT\n" + POOL_END + "\n\n## Citation\n"
    text = replace_marked(stale, POOL_BEGIN, POOL_END, pool_section(run_a))
    assert text.startswith("---\nlicense: mit\n---\n\n# Card\n\n" + POOL_BEGIN) and text.endswith("\n\n## Citation\n")
    assert "STALE TEXT" not in text and text.count(POOL_BEGIN) == 1
    ok = sum(r["status"] == "ok" for r in pq.read_table(run_a / "corruptions.parquet", columns=["status"]).to_pylist())
    assert ok == N_MODELS * N_VARIANTS
    assert f"3D wireframes of {N_MODELS} ground-truth models" in text and f"and {ok} corrupted variants" in text
    assert "| kind | " + " | ".join(SEVERITIES) + " |" in text
    for kind in get_corruption_names():
        assert f"| `{kind}` | " + " | ".join([str(N_MODELS)] * len(SEVERITIES)) + " |" in text
    pairs = pq.read_table(run_a / "pairs.parquet", columns=["pair_type"]).column("pair_type").to_pylist()
    assert f"regular {pairs.count('regular')}" in text
    assert (run_a / "preview" / "corruptions.png").is_file()
    assert "![corrupted variants](preview/corruptions.png)" in text
