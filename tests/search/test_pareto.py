"""GEPA's Pareto-frontier parent sampling (search.pareto): the weights formula and the draw."""

from __future__ import annotations

import random
from collections import Counter

from evoarena.search import ParetoSampler, Scored, archive_of, fronts, pareto_weights


def test_fronts_hold_every_co_best_candidate_per_instance() -> None:
    arch = archive_of({"a": [1, 0.5], "b": [1, 0.2], "c": [0, 0.5]})
    assert fronts(arch) == [{"a", "b"}, {"a", "c"}]


def test_weights_count_co_best_instances_after_removing_dominated() -> None:
    scores = {
        "a": [1, 1, 0, 0, 0],  # co-best on 0 and 1 (alone on 1)
        "b": [1, 0, 1, 0, 0],  # co-best on 0 and 2 (alone on 2)
        "c": [0, 0, 0, 1, 0.5],  # best on 3 and 4
        "d": [1, 0, 0, 0, 0],  # only on front 0, where a and b also are: dominated
    }
    assert pareto_weights(archive_of(scores)) == {"a": 2, "b": 2, "c": 2}
    # c (lowest mean) is only on front 2, shared with a: removed; a is then alone on front 2 and stays
    assert pareto_weights(archive_of({"a": [1, 0, 1], "b": [1, 1, 0], "c": [0, 0, 1]})) == {"a": 2, "b": 2}
    # identical candidates: the lower-mean-then-earlier one goes first, one removal at a time
    assert pareto_weights(archive_of({"x": [0.5, 0.5], "y": [0.5, 0.5]})) == {"y": 2}
    assert pareto_weights(archive_of({"x": [], "y": []})) == {"x": 1, "y": 1}
    assert pareto_weights(()) == {}


def test_equal_means_are_removed_in_order_of_first_appearance_on_a_front() -> None:
    """gepa 0.1.4 gepa_utils.py lines 38-49: programs are listed as they first appear on the fronts, instance by
    instance, then sorted by score (stable), so among equal means the one seen first is removed first — here c1
    (on front 0) before c0 (first on front 1)."""
    arch = archive_of({"c0": [0, 1, 1], "c1": [1, 1, 0], "c2": [1, 0, 1]})
    assert pareto_weights(arch) == {"c0": 2, "c2": 2}


def test_a_dominated_candidate_is_never_sampled() -> None:
    arch = archive_of({"a": [1, 1, 0], "b": [0, 1, 1], "d": [0, 1, 0]})  # d sits only on front 1, with a and b
    rng = random.Random(3)
    assert {ParetoSampler().select(arch, rng).id for _ in range(2000)} == {"a", "b"}


def test_sampling_frequencies_follow_the_front_counts() -> None:
    arch = archive_of({"a": [1, 1, 1, 0], "b": [0, 0, 0, 1], "d": [0, 0, 0, 0]})
    rng = random.Random(0)
    counts = Counter(ParetoSampler().select(arch, rng).id for _ in range(8000))
    assert "d" not in counts
    assert abs(counts["a"] / 8000 - 0.75) < 0.03 and abs(counts["b"] / 8000 - 0.25) < 0.03


def test_one_draw_is_exactly_one_weighted_choices_call() -> None:
    """The stream a run depends on: the sampler draws what `rng.choices(ids, weights)` draws, and nothing more."""
    arch = archive_of({"a": [1, 0, 0], "b": [0, 1, 0], "c": [0, 1, 1]})
    for seed in range(20):
        mine, ref = random.Random(seed), random.Random(seed)
        got = ParetoSampler().select(arch, mine)
        assert got.id == ref.choices(["a", "c"], weights=[1, 2])[0]
        assert mine.getstate() == ref.getstate()


def test_the_pick_is_the_archive_member_itself() -> None:
    arch = (Scored("p", (1.0,), parent=None), Scored("q", (0.0,), parent="p"))
    assert ParetoSampler().select(arch, random.Random(0)) is arch[0]
