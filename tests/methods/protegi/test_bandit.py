"""ProTeGi's evaluation budget (the released `UCBBandits` / `UCBBanditEvaluator`): the UCB score, greedy at the first
counted round (ln 1 = 0), random before anything is counted, uniform in turn, an unchosen candidate scored 0."""

from __future__ import annotations

import math
import random

from evoarena.methods.protegi.bandit import EPS, Arms, allocate, choose_ucb, choose_uniform


def test_ucb_is_the_mean_plus_c_sqrt_ln_t_over_the_count() -> None:
    arms = Arms(counts=[32.0, 4.0], totals=[0.9 * 32, 0.5 * 4])
    # t = 2: 0.9 + c·sqrt(ln 2 / 32.001) against 0.5 + c·sqrt(ln 2 / 4.001)
    assert choose_ucb(arms, 1, 2, 1.0, random.Random(0)) == [0]
    assert choose_ucb(arms, 1, 2, 2.0, random.Random(0)) == [1]
    bonus = [math.sqrt(math.log(2) / (n + EPS)) for n in arms.counts]
    assert 0.9 + 2 * bonus[0] < 0.5 + 2 * bonus[1] and 0.9 + bonus[0] > 0.5 + bonus[1]


def test_the_first_counted_round_is_greedy_whatever_c() -> None:
    """As released, t is the evaluation round's index: at t = 1 the bonus is c·sqrt(ln 1 / n) = 0 (a mutation to
    ln(t + 1) explores here and fails)."""
    arms = Arms(counts=[32.0, 1.0], totals=[0.6 * 32, 0.5])
    assert choose_ucb(arms, 1, 1, 100.0, random.Random(0)) == [0]


def test_nothing_counted_draws_at_random() -> None:
    picks = {tuple(choose_ucb(Arms.empty(6), 2, 0, 1.0, random.Random(s))) for s in range(10)}
    assert len(picks) > 1


def test_uniform_spreads_the_same_budget_evenly() -> None:
    counts = [0] * 5
    for t in range(5):
        for i in choose_uniform(5, 2, t):
            counts[i] += 1
    assert counts == [2] * 5
    assert choose_uniform(3, 3, 7) == [0, 1, 2]


def test_allocate_counts_queries_and_scores_an_unchosen_candidate_zero() -> None:
    seen: list[list[int]] = []

    def evaluate(chosen: list[int]) -> list[float]:
        seen.append(chosen)
        return [1.0 if i == 2 else 0.5 for i in chosen]

    out = allocate(4, 3, 2, 8, "uniform", 1.0, random.Random(0), evaluate)
    assert seen == [[0, 1], [2, 3], [0, 1]]
    assert out.arms.counts == [16, 16, 8, 8] and out.arms.means() == [0.5, 0.5, 1.0, 0.5]
    ucb = allocate(5, 1, 2, 8, "ucb", 1.0, random.Random(0), evaluate)
    assert sorted(m for m, n in zip(ucb.arms.means(), ucb.arms.counts, strict=True) if n == 0) == [0.0] * 3
    assert len(allocate(2, 1, 8, 8, "ucb", 1.0, random.Random(0), evaluate).log[0]["chosen"]) == 2  # type: ignore[arg-type]
