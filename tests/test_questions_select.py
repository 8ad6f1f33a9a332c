"""Question planning: split sizes, strata quotas, the model queue and balanced labels (pure, fast)."""

from __future__ import annotations

from collections import Counter

import pytest

from spare_gen.card.dataset import rules
from spare_gen.config import load_config
from spare_gen.stages.questions.select import (
    split_ratio,
    ModelQueues, balanced_choice, balanced_labels, fit_counts, model_order, needs_by_split, needs_by_stratum,
    plan_quotas, shortage, split_blocks, split_sizes, spread,
)
from spare_gen.rng import derive_rng

SPLITS = ("train", "val", "test")
RATIOS = (0.8, 0.1, 0.1)


@pytest.mark.parametrize("n, expected", [(12, [10, 1, 1]), (10, [8, 1, 1]), (2000, [1600, 200, 200]),
                                         (6, [5, 1, 0]), (3, [3, 0, 0]), (0, [0, 0, 0])])
def test_split_sizes_largest_remainder(n, expected):
    assert split_sizes(n, RATIOS) == expected


def test_split_sizes_rejects_bad_ratios():
    with pytest.raises(ValueError, match="cannot split"):
        split_sizes(5, (0.0, 0.0, 0.0))


def test_spread_gives_extras_from_start_index():
    assert spread(10, [2, 3, 4], 0) == {2: 4, 3: 3, 4: 3}
    assert spread(10, [2, 3, 4], 2) == {2: 3, 3: 3, 4: 4}
    assert spread(2, [2, 3, 4], 2) == {2: 1, 3: 0, 4: 1}


def test_quotas_balance_strata_in_every_split_and_overall():
    quotas = plan_quotas({"a": 12, "b": 12}, RATIOS, SPLITS, [2, 3, 4])
    for task in ("a", "b"):
        for split, size in zip(SPLITS, [10, 1, 1]):
            counts = [quotas[(task, split, s)] for s in (2, 3, 4)]
            assert sum(counts) == size and max(counts) - min(counts) <= 1
        # the odd extras rotate, so each task's total mix is even too: 10 -> 4/3/3, then 1 and 1 elsewhere
        assert sorted(sum(quotas[(task, sp, s)] for sp in SPLITS) for s in (2, 3, 4)) == [4, 4, 4]
    assert needs_by_stratum(quotas) == {2: 8, 3: 8, 4: 8}


def test_shortage_names_needed_and_usable_counts():
    quotas = plan_quotas({"a": 12}, RATIOS, SPLITS, [2, 3, 4])
    assert shortage(quotas, {2: 4, 3: 4, 4: 4}) == ""
    msg = shortage(quotas, {2: 4, 3: 4, 4: 1})
    assert "need 12 usable models, 9 are usable" in msg and "4-primitive models: need 4, usable 1" in msg


def test_fit_counts_scales_down_to_what_fits():
    counts = fit_counts({"a": 12, "b": 12}, RATIOS, SPLITS, {2: 4, 3: 4, 4: 4})
    assert counts == {"a": 6, "b": 6}
    assert not shortage(plan_quotas(counts, RATIOS, SPLITS, [2, 3, 4]), {2: 4, 3: 4, 4: 4})
    assert fit_counts({"a": 3}, RATIOS, SPLITS, {None: 10}) == {"a": 3}


def test_model_order_is_stable_when_models_are_added():
    ids = [f"m{i}" for i in range(20)]
    more = ids + [f"x{i}" for i in range(10)]
    order, order_more = model_order(ids, 7), model_order(more, 7)
    assert [m for m in order_more if m in set(ids)] == order
    assert order != sorted(ids) and model_order(ids, 8) != order


def test_queues_deal_each_model_once():
    queues = ModelQueues({2: ["a", "b", "c"], 3: ["d"]}, seed=0)
    first, second = queues.take(2, 2), queues.take(2, 5)
    assert len(first) == 2 and len(second) == 1 and set(first) | set(second) == {"a", "b", "c"}
    assert queues.take(3, 1) == ["d"] and queues.take(3, 1) == [] and queues.remaining(2) == 0
    assert queues.take(4, 3) == []


def test_split_blocks_keep_each_model_in_one_split_and_every_task_deals_the_same_models_first():
    """Model reuse: each stratum cut 8:1:1 in the seeded order; two tasks' queues deal the same models per split."""
    models = {2: [f"a{i}" for i in range(10)], 3: [f"b{i}" for i in range(20)]}
    blocks = split_blocks(models, RATIOS, SPLITS, seed=3)
    assert {k: len(v) for k, v in blocks.items()} == {
        ("train", 2): 8, ("val", 2): 1, ("test", 2): 1, ("train", 3): 16, ("val", 3): 2, ("test", 3): 2}
    for stratum, ids in models.items():
        assert sum((blocks[(s, stratum)] for s in SPLITS), []) == model_order(ids, 3)
    a, b = ModelQueues(blocks, seed=3, by_split=True), ModelQueues(blocks, seed=3, by_split=True)
    assert a.take_for(("task_a", "val", 3), 5) == b.take_for(("task_b", "val", 3), 5) == blocks[("val", 3)]
    assert set(a.take_for(("task_a", "train", 2), 3)) <= set(blocks[("train", 2)])
    quotas = {("t1", "train", 2): 8, ("t2", "train", 2): 5, ("t1", "val", 2): 1, ("t2", "val", 2): 2}
    assert needs_by_split(quotas) == {("train", 2): 8, ("val", 2): 2}  # the largest task's, not the sum
    assert shortage(quotas, {k: len(v) for k, v in blocks.items()}, by_split=True) == (
        "the requested questions need 10 usable models, 9 are usable (val 2-primitive models: need 2, usable 1)")


@pytest.mark.parametrize("n, k", [(10, 4), (1, 4), (4, 4), (1600, 4), (7, 3)])
def test_balanced_labels_counts_at_most_one_apart(n, k):
    labels = balanced_labels(n, k, derive_rng(0, "t", n))
    counts = Counter(labels)
    assert len(labels) == n and set(labels) <= set(range(k))
    assert max(counts.get(i, 0) for i in range(k)) - min(counts.get(i, 0) for i in range(k)) <= 1


def test_balanced_labels_extras_are_random():
    extras = {tuple(sorted(Counter(balanced_labels(5, 4, derive_rng(s, "t"))).items())) for s in range(30)}
    assert len(extras) > 1  # the label with 2 occurrences is not always the same


def test_balanced_choice_respects_options_and_balances():
    rng = derive_rng(1, "poses")
    values = list(range(1, 9))
    picks = balanced_choice([values] * 20, values, rng)
    counts = Counter(picks)
    assert max(counts.values()) - min(counts[v] for v in values) <= 1
    restricted = balanced_choice([[1, 2], [1], [2, 3]], values, rng)
    assert restricted[0] in (1, 2) and restricted[1] == 1 and restricted[2] in (2, 3)
    with pytest.raises(ValueError, match="no allowed value"):
        balanced_choice([[99]], values, rng)


def test_the_split_ratio_is_said_in_the_smallest_whole_numbers_and_the_card_says_the_configured_one():
    assert split_ratio((0.8, 0.1, 0.1)) == "8:1:1"
    assert split_ratio((0.7, 0.15, 0.15)) == "14:3:3"
    assert split_ratio((0.5, 0.25, 0.25)) == "2:1:1"
    assert split_ratio((1 / 3, 1 / 3, 1 / 3)) == "1:1:1"
    assert split_ratio((0.3333, 0.3333, 0.3334)) == "33.3 % / 33.3 % / 33.3 %"  # no small whole-number ratio
    assert any("sized 8:1:1," in rule for rule in rules(load_config(None)))
    assert any("sized 14:3:3," in rule for rule in rules(load_config(None, ["questions.split=[0.7,0.15,0.15]"])))
