"""Greedy selection (search.greedy): the highest mean, the earliest among ties, no random draw."""

from __future__ import annotations

import random

from evoarena.search import BestMean, Scored, archive_of, best_index, mean


def test_mean_of_nothing_is_zero() -> None:
    assert mean([]) == 0.0 and mean([1.0, 0.0, 0.5]) == 0.5 and Scored("a", (1.0, 0.0)).mean == 0.5


def test_highest_mean_wins_and_ties_go_to_the_earliest() -> None:
    assert best_index(archive_of({"a": [0, 1], "b": [1, 1], "c": [1, 0]})) == 1
    assert best_index(archive_of({"a": [0.5, 0.5], "b": [1, 0], "c": [0, 1]})) == 0
    assert best_index(archive_of({"a": [0, 0], "b": [0.5, 0], "c": [0, 0.5]})) == 1


def test_best_mean_draws_nothing() -> None:
    rng = random.Random(5)
    state = rng.getstate()
    arch = archive_of({"a": [0.2], "b": [0.9]})
    assert BestMean().select(arch, rng).id == "b" and rng.getstate() == state
