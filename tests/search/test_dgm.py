"""The Darwin Gödel Machine's parent weight (search.dgm): sigmoid(10·(score − 0.5)) / (1 + children), sampled."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from evoarena.search.archive import Scored
from evoarena.search.dgm import DGMParent, child_counts, dgm_weight, dgm_weights, sigmoid


def test_weight_on_known_numbers() -> None:
    assert dgm_weight(0.5, 0) == 0.5  # the midpoint: sigmoid(0)
    assert dgm_weight(0.7, 0) == pytest.approx(1 / (1 + math.exp(-2)))  # 0.8808
    assert dgm_weight(0.3, 0) == pytest.approx(1 / (1 + math.exp(2)))  # 0.1192
    assert dgm_weight(1.0, 0) == pytest.approx(0.993307, abs=1e-6)
    assert dgm_weight(0.7, 3) == pytest.approx(0.880797 / 4, abs=1e-6)
    assert dgm_weight(0.6, 0, steepness=1.0, midpoint=0.6) == 0.5


def test_sigmoid_is_stable_far_from_zero() -> None:
    assert sigmoid(-1000) == 0.0 and sigmoid(1000) == 1.0 and sigmoid(2) + sigmoid(-2) == pytest.approx(1.0)


def test_children_lower_the_weight() -> None:
    arch = (
        Scored("root", (0.7,)),
        Scored("a", (0.7,), "root"),
        Scored("b", (0.2,), "root"),
        Scored("c", (0.9,), "a"),
        Scored("d", (0.9,), "elsewhere"),  # a parent outside the archive counts for nobody
    )
    assert child_counts(arch) == {"root": 2, "a": 1, "b": 0, "c": 0, "d": 0}
    w = dgm_weights(arch)
    assert w[0] == pytest.approx(w[1] * 2 / 3)  # same score: 1/3 vs 1/2 of the sigmoid
    assert w[0] < w[1] < w[3] == w[4]


def test_sampling_frequencies_match_the_normalised_weights() -> None:
    arch = (
        Scored("root", (0.6,)),
        Scored("a", (0.8,), "root"),
        Scored("b", (0.3,), "root"),
        Scored("c", (0.5,), "a"),
    )
    w = dgm_weights(arch)
    expected = {c.id: x / sum(w) for c, x in zip(arch, w, strict=True)}
    rng = random.Random(7)
    n = 20000
    got = Counter(DGMParent().select(arch, rng).id for _ in range(n))
    for i, p in expected.items():
        assert got[i] / n == pytest.approx(p, abs=0.015), i


def test_a_seeded_rng_gives_the_same_parents() -> None:
    arch = tuple(Scored(f"n{i}", (i / 10,), None if i == 0 else f"n{i // 2}") for i in range(10))
    draws = [[DGMParent().select(arch, rng).id for _ in range(50)] for rng in (random.Random(3), random.Random(3))]
    assert draws[0] == draws[1] and len(set(draws[0])) > 1


def test_empty_archive_is_refused() -> None:
    with pytest.raises(ValueError):
        DGMParent().select((), random.Random(0))


def test_select_among_weights_by_the_whole_archive() -> None:


    # p has two children in the archive: restricted to {p, q}, its weight still counts them
    archive = (Scored("p", (0.9,)), Scored("q", (0.9,)), Scored("c1", (0.0,), "p"), Scored("c2", (0.0,), "p"))
    rng = random.Random(1)
    picks = [DGMParent().select_among(archive, archive[:2], rng).id for _ in range(3000)]
    share = picks.count("p") / len(picks)
    expected = dgm_weight(0.9, 2) / (dgm_weight(0.9, 2) + dgm_weight(0.9, 0))
    assert abs(share - expected) < 0.03 and set(picks) == {"p", "q"}
