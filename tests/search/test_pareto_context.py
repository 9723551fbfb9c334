"""Meta-Harness's score-vs-context-size frontier (search.pareto_context): dominance, duplicates, the uniform draw."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from evoarena.search.archive import Scored, archive_of
from evoarena.search.pareto_context import ContextParetoSampler, context_frontier, dominates


def ids(front: list[Scored]) -> list[str]:
    return [c.id for c in front]


def test_dominance() -> None:
    assert dominates((0.5, 100), (0.5, 200))  # equal score, smaller size
    assert dominates((0.6, 100), (0.5, 100))  # equal size, higher score
    assert dominates((0.6, 50), (0.5, 100))
    assert not dominates((0.5, 100), (0.5, 100))  # equal both: neither
    assert not dominates((0.6, 200), (0.5, 100))  # a trade-off: neither
    assert not dominates((0.5, 100), (0.6, 200))


def test_the_frontier_keeps_the_trade_offs_in_archive_order() -> None:
    arch = archive_of({"big": [1, 1], "mid": [1, 0], "small": [0, 0], "bad": [0, 1], "worse": [0, 0]})
    sizes = {"big": 900, "mid": 300, "small": 10, "bad": 400, "worse": 20}
    # bad (0.5, 400) is dominated by mid (0.5, 300); worse (0, 20) by small (0, 10)
    assert ids(context_frontier(arch, sizes)) == ["big", "mid", "small"]


def test_equal_score_smaller_size_dominates() -> None:
    arch = archive_of({"a": [0.5], "b": [0.5]})
    assert ids(context_frontier(arch, {"a": 200, "b": 100})) == ["b"]
    assert ids(context_frontier(arch, {"a": 100, "b": 100})) == ["a"]  # equal both: kept once, the earliest


def test_duplicates_of_a_dominated_point_all_go() -> None:
    arch = archive_of({"x": [0.2], "y": [0.2], "z": [0.9], "w": [0.9]})
    assert ids(context_frontier(arch, {"x": 50, "y": 50, "z": 10, "w": 10})) == ["z"]


def test_a_missing_size_is_an_error() -> None:
    with pytest.raises(KeyError, match="b"):
        context_frontier(archive_of({"a": [1], "b": [0]}), {"a": 1})


def test_the_draw_is_uniform_over_the_frontier_and_seeded() -> None:
    arch = archive_of({"a": [1.0], "b": [0.5], "c": [0.0], "d": [0.4]})
    policy = ContextParetoSampler({"a": 300, "b": 200, "c": 100, "d": 250})  # d dominated by b
    rng = random.Random(5)
    draws = Counter(policy.select(arch, rng).id for _ in range(3000))
    assert set(draws) == {"a", "b", "c"} and all(abs(n / 3000 - 1 / 3) < 0.04 for n in draws.values())
    first, second = random.Random(9), random.Random(9)
    assert [policy.select(arch, first).id for _ in range(30)] == [policy.select(arch, second).id for _ in range(30)]
    with pytest.raises(ValueError):
        policy.select((), random.Random(0))
