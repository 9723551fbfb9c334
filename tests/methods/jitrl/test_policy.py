"""JitRL's priors, values and the two variants against hand computations: the paper's unseen-action rule (λ, V̂ +
α/|N|, else 0) and max-|A| normalisation; the released joined memory actions, adaptive exploration, recomputed
baseline, largest-positive normalisation, episode weight, probability add and argmax; seeded sampling."""

from __future__ import annotations

import math
import random

import pytest

from evoarena.methods.jitrl.policy import (
    episode_weight,
    paper_estimate,
    paper_policy,
    prior_from_confidence,
    prior_from_logprobs,
    prior_from_probs,
    released_estimate,
    released_exploration_probability,
    released_policy,
    sample,
)


class Script:
    """A scripted `rng`: hands out the given uniforms in order and fails if asked for more."""

    def __init__(self, *draws: float) -> None:
        self.draws = list(draws)

    def random(self) -> float:
        assert self.draws, "more random draws than scripted"
        return self.draws.pop(0)


def test_prior_from_logprobs_renormalises_and_keeps_exp_logprob_as_raw() -> None:
    prior = prior_from_logprobs({"1": math.log(0.5), "2": math.log(0.25), "3": math.log(0.05)})
    assert prior.probs == pytest.approx((0.5 / 0.8, 0.25 / 0.8, 0.05 / 0.8))
    assert prior.raw == pytest.approx((0.5, 0.25, 0.05))
    assert prior.source == "logprob"


def test_prior_from_confidence_clamps_and_normalises() -> None:
    prior = prior_from_confidence({"a": 70, "b": 30, "c": 130, "d": -5})
    assert prior.probs == pytest.approx((70 / 200, 30 / 200, 100 / 200, 0.0))
    assert prior.raw == pytest.approx((0.7, 0.3, 1.0, 0.0))
    assert prior_from_confidence({"a": 0, "b": 0}).probs == (0.5, 0.5)


def test_priors_refuse_what_is_not_a_distribution() -> None:
    with pytest.raises(ValueError):
        prior_from_probs({"a": -0.1, "b": 1.0})
    with pytest.raises(ValueError):
        prior_from_probs({})
    with pytest.raises(ValueError):
        prior_from_probs({"a ": 0.5, "a": 0.5})  # the same action once stripped


def test_paper_estimate_unseen_action_explored_or_zero() -> None:
    neighbours = [("a", 2.0), ("a", 2.0), ("b", 0.0)]  # V̂ = 4/3, |N| = 3
    rng = Script(0.5)  # < λ = 0.65: explored
    est = paper_estimate(["a", "b", "e"], neighbours, lam=0.65, alpha=5.0, rng=rng)
    assert est.q == pytest.approx((2.0, 0.0, 4 / 3 + 5 / 3))
    assert est.raw_advantages == pytest.approx((2 / 3, -4 / 3, 5 / 3))
    assert est.advantages == pytest.approx((0.4, -0.8, 1.0))  # ÷ max |A| = 5/3
    assert est.explored == ("e",) and rng.draws == []
    est = paper_estimate(["a", "b", "e"], neighbours, lam=0.65, alpha=5.0, rng=Script(0.7))  # ≥ λ: Q̂ = 0
    assert est.q == pytest.approx((2.0, 0.0, 0.0))
    assert est.advantages == pytest.approx((0.5, -1.0, -1.0))
    assert est.explored == () and est.unseen == ("e",)


def test_released_exploration_probability() -> None:
    assert released_exploration_probability({"a": [1.0], "b": [2.0]}) == 0.8  # no action with two returns
    # a: mean 2, std 0, CV 0 → confidence 2^0.65 · max(2/4, 1) = 2^0.65
    assert released_exploration_probability({"a": [2.0, 2.0]}) == pytest.approx(1 / (1 + 2 ** 0.65))
    # b: mean 2, std 1 (population), CV 0.5, n = 8 → (2/1.5)^0.65 · 2
    b = [1.0, 3.0] * 4
    assert released_exploration_probability({"b": b}) == pytest.approx(1 / (1 + (2 / 1.5) ** 0.65 * 2))
    assert released_exploration_probability({"c": [50.0] * 8}) == 0.05  # clamped
    assert released_exploration_probability({"d": [-1.0, -3.0]}) == 0.8  # confidence 0 → 1/(1+0) → clamp 0.8


def test_episode_weight() -> None:
    assert [episode_weight(e) for e in (0, 10, 25, 50, 80)] == pytest.approx([1.0, 1.1, 1.25, 1.5, 1.5])


def test_released_estimate_by_hand() -> None:
    # c is memory-only with mean > 0 (joins), d memory-only with mean ≤ 0 (does not join), e unseen
    neighbours = [("a", 2.0), ("a", 2.0), ("b", 0.0), ("c", 1.0), ("d", -1.0)]  # V̂ = 0.8, |N| = 5
    p = 1 / (1 + 2 ** 0.65)
    rng = Script(p - 0.01)
    est = released_estimate(["a", "b", "e"], neighbours, exponent=0.65, alpha=1.0, rng=rng)
    assert est.actions == ("a", "b", "e", "c") and est.joined == ("c",)
    assert est.exploration_prob == pytest.approx(p) and est.explored == ("e",)
    assert est.mean_return == pytest.approx(0.8)
    assert est.q == pytest.approx((2.0, 0.0, 0.8 + 1 / 5, 1.0))
    assert est.baseline == pytest.approx((2 + 0 + 1.0 + 1 - 1) / 5)  # recomputed over per-action means, d included
    assert est.advantages == pytest.approx((1.0, -0.6 / 1.4, 0.4 / 1.4, 0.4 / 1.4))  # ÷ largest positive
    est = released_estimate(["a", "b", "e"], neighbours, exponent=0.65, alpha=1.0, rng=Script(p + 0.01))
    assert est.q[2] == 0.0 and est.baseline == pytest.approx(0.4)
    assert est.advantages == pytest.approx((1.0, -0.25, -0.25, 0.375))
    # no unseen option: the baseline stays V̂ (the mean of the hits), no draw
    est = released_estimate(["a", "b"], neighbours, exponent=0.65, alpha=1.0, rng=Script())
    assert est.baseline == pytest.approx(0.8) and est.unseen == ()


def test_released_policy_adds_the_weighted_advantage_to_the_raw_prior_and_takes_argmax() -> None:
    prior = prior_from_confidence({"a": 60, "b": 40})
    memory = [("a", 0.0), ("b", 1.0), ("b", 1.0)]  # V̂ = 2/3; A = (−2/3, 1/3) → (−2, 1)
    first = released_policy(prior, memory, exponent=0.65, alpha=1.0, rng=Script(), episodes_done=0)
    later = released_policy(prior, memory, exponent=0.65, alpha=1.0, rng=Script(), episodes_done=50)
    assert first.estimate.advantages == pytest.approx((-2.0, 1.0))
    assert first.scores == pytest.approx((0.6 - 2.0, 0.4 + 1.0)) and first.chosen == "b"
    assert later.weight == 1.5 and later.scores == pytest.approx((0.6 - 3.0, 0.4 + 1.5))
    off = released_policy(prior, memory, exponent=0.65, alpha=1.0, rng=Script(), episodes_done=50,
                          use_episode_weight=False)
    assert off.weight == 1.0


def test_released_policy_without_neighbours_keeps_the_models_pick() -> None:
    prior = prior_from_confidence({"a": 60, "b": 40})
    assert released_policy(prior, [], exponent=0.65, alpha=1.0, rng=Script()).chosen == "a"
    assert released_policy(prior, [], exponent=0.65, alpha=1.0, rng=Script(), fallback="b").chosen == "b"
    assert released_policy(prior, [], exponent=0.65, alpha=1.0, rng=Script(), fallback="zzz").chosen == "a"


def test_a_joined_memory_only_action_can_win_the_released_argmax() -> None:
    prior = prior_from_confidence({"a": 90, "b": 10})
    memory = [("c", 5.0), ("c", 5.0), ("a", 0.0), ("b", 0.0)]
    step = released_policy(prior, memory, exponent=0.65, alpha=1.0, rng=Script())
    assert step.actions == ("a", "b", "c") and step.prior[2] == 0.0 and step.chosen == "c"


def test_paper_policy_memory_actions_join_only_when_asked() -> None:
    prior = prior_from_probs({"a": 0.5, "b": 0.5})
    memory = [("c", 5.0), ("a", 0.0)]
    closed = paper_policy(prior, memory, beta=1.0, lam=0.0, alpha=5.0, rng=random.Random(0))
    assert closed.actions == ("a", "b")
    opened = paper_policy(prior, memory, beta=1.0, lam=0.0, alpha=5.0, rng=random.Random(0), memory_action_prior=0.5)
    assert opened.actions == ("a", "b", "c") and opened.prior == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert max(opened.scores) == opened.scores[2]


def test_paper_sampling_is_seeded_and_follows_the_policy() -> None:
    prior = prior_from_probs({"a": 0.5, "b": 0.3, "c": 0.2})
    memory = [("a", 1.0), ("b", 0.0), ("c", 0.5)]

    def run(seed: int) -> list[str]:
        rng = random.Random(seed)
        return [paper_policy(prior, memory, beta=1.0, lam=0.65, alpha=5.0, rng=rng).chosen for _ in range(3000)]

    first = run(11)
    assert first == run(11) and first != run(12)
    pi = paper_policy(prior, memory, beta=1.0, lam=0.65, alpha=5.0, rng=random.Random(0)).scores
    for action, p in zip("abc", pi, strict=True):
        assert first.count(action) / len(first) == pytest.approx(p, abs=0.03)


def test_sample_uses_one_draw_and_skips_zero_mass() -> None:
    assert sample([0.2, 0.0, 0.8], Script(0.1)) == 0
    assert sample([0.2, 0.0, 0.8], Script(0.2)) == 2
    assert sample([0.5, 0.5, 0.0], Script(0.9999999999999999)) == 1
