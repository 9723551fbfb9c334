"""Seed 000's model-free JitRL checks (the report's §8 A, the digest's §7 (b)) as unit tests: β = 0 returns π₀; an
empty memory is safe; raising an action's returns raises its probability; probabilities sum to 1; a constant added
to every advantage leaves the softmax unchanged; logit-add ≡ normalised π₀·exp(βA); the digest's counter-example
(prob-add picks action 2, logit-add action 1); discounted returns of a hand-computed episode; the released
retrieval threshold schedule."""

from __future__ import annotations

import math
import random

import pytest

from evoarena.methods.jitrl.core import JitRL, JitRLConfig
from evoarena.methods.jitrl.policy import (
    argmax,
    kl_reweight,
    log_probs,
    logit_update,
    paper_estimate,
    paper_policy,
    prior_from_probs,
    probability_add,
    released_estimate,
    released_policy,
    softmax,
)
from evoarena.methods.jitrl.step_memory import RetrievalConfig, StepKey, StepMemory, discounted_returns, threshold_at

PRIOR = prior_from_probs({"open door": 0.5, "go north": 0.3, "take lamp": 0.2})
# neighbours as (action, return); "eat apple" is memory-only, "take lamp" unseen
MEMORY = [("open door", 2.0), ("open door", 1.0), ("go north", -1.0), ("eat apple", 3.0)]


def test_beta_zero_returns_the_prior() -> None:
    step = paper_policy(PRIOR, MEMORY, beta=0.0, lam=1.0, alpha=5.0, rng=random.Random(0))
    assert any(a != 0 for a in step.estimate.advantages)  # the memory had something to say...
    assert step.scores == pytest.approx(PRIOR.probs, abs=1e-12)  # ...and β = 0 ignores it
    assert step.actions == PRIOR.actions


@pytest.mark.parametrize("variant", ["paper", "released"])
def test_an_empty_memory_is_safe_and_changes_nothing(variant: str) -> None:
    agent = JitRL(JitRLConfig.paper_jericho() if variant == "paper" else JitRLConfig.released_jericho(), seed=1)
    assert len(agent.memory) == 0
    decision = agent.decide(StepKey("west of house", "no history"), PRIOR, step=0)
    est = decision.policy.estimate
    assert decision.neighbours == () and est.n == 0
    assert est.advantages == (0.0, 0.0, 0.0) and est.explored == ()
    if variant == "paper":
        assert decision.policy.scores == pytest.approx(PRIOR.probs)
    else:
        assert decision.chosen == "open door"  # the highest raw prior: the model's own pick is kept
        assert decision.policy.scores == PRIOR.raw


def test_no_division_by_zero_without_neighbours_even_with_unseen_options() -> None:
    class Boom:
        def random(self) -> float:
            raise AssertionError("no exploration draw without neighbours")

    for est in (paper_estimate(["a", "b"], [], lam=1.0, alpha=5.0, rng=Boom()),
                released_estimate(["a", "b"], [], exponent=0.65, alpha=1.0, rng=Boom())):
        assert est.advantages == (0.0, 0.0) and est.mean_return == 0.0


def test_raising_an_actions_returns_raises_its_probability() -> None:
    prior = prior_from_probs({"a": 0.4, "b": 0.4, "c": 0.2})
    last = 0.0
    for g in (-2.0, -1.0, 0.0, 0.5, 1.0, 3.0):
        neighbours = [("a", g), ("b", 1.0), ("c", 0.0)]
        step = paper_policy(prior, neighbours, beta=1.0, lam=0.0, alpha=5.0, rng=random.Random(0), normalise=False)
        assert step.scores[0] > last
        last = step.scores[0]
    # with the paper's max-|A| normalisation, in a three-action case where the scale does not saturate
    low = paper_policy(prior, [("a", 2.0), ("b", 1.0), ("c", 0.0)], beta=2.0, lam=0.0, alpha=5.0,
                       rng=random.Random(0))
    high = paper_policy(prior, [("a", 3.0), ("b", 1.0), ("c", 0.0)], beta=2.0, lam=0.0, alpha=5.0,
                        rng=random.Random(0))
    assert high.scores[0] > low.scores[0]


def test_probabilities_sum_to_one() -> None:
    rng = random.Random(7)
    for _ in range(200):
        actions = [f"a{i}" for i in range(rng.randint(1, 6))]
        prior = prior_from_probs({a: rng.random() + 1e-3 for a in actions})
        neighbours = [(rng.choice([*actions, "memory only"]), rng.uniform(-10, 10)) for _ in range(rng.randint(0, 12))]
        step = paper_policy(prior, neighbours, beta=rng.uniform(0, 20), lam=0.65, alpha=5.0, rng=rng,
                            memory_action_prior=rng.choice([None, 0.1]))
        assert math.fsum(step.scores) == pytest.approx(1.0, abs=1e-12)
        assert math.fsum(step.prior) == pytest.approx(1.0, abs=1e-12)
        assert all(p >= 0 for p in step.scores)


def test_adding_a_constant_to_every_advantage_leaves_the_softmax_unchanged() -> None:
    z = log_probs(PRIOR.probs)
    adv = [0.7, -1.2, 0.1]
    for c in (-100.0, -3.0, 0.5, 40.0):
        shifted = [a + c for a in adv]
        assert logit_update(z, shifted, 1.5) == pytest.approx(logit_update(z, adv, 1.5), abs=1e-12)
        assert kl_reweight(PRIOR.probs, shifted, 1.5) == pytest.approx(kl_reweight(PRIOR.probs, adv, 1.5), abs=1e-12)
    # and so, without normalisation, the baseline V̂ is a constant that cancels: Q̂ alone gives the same π′
    est = paper_estimate(PRIOR.actions, MEMORY, lam=0.0, alpha=5.0, rng=random.Random(0), normalise=False)
    assert est.baseline != 0
    assert logit_update(z, list(est.q), 1.0) == pytest.approx(logit_update(z, list(est.advantages), 1.0))


def test_logit_add_is_the_normalised_prior_times_exp_beta_a() -> None:
    rng = random.Random(3)
    for _ in range(100):
        n = rng.randint(1, 7)
        probs = [rng.random() + 1e-6 for _ in range(n)]
        probs = [p / sum(probs) for p in probs]
        adv = [rng.uniform(-1, 1) for _ in range(n)]
        beta = rng.uniform(0, 10)
        direct = [p * math.exp(beta * a) for p, a in zip(probs, adv, strict=True)]
        direct = [d / sum(direct) for d in direct]
        assert logit_update(log_probs(probs), adv, beta) == pytest.approx(direct, rel=1e-9)
        assert kl_reweight(probs, adv, beta) == pytest.approx(direct, rel=1e-9)
        # any logits with the same softmax (log π₀ + a constant) give the same policy
        assert logit_update([math.log(p) + 17.0 for p in probs], adv, beta) == pytest.approx(direct, rel=1e-9)


def test_the_digest_counter_example_prob_add_picks_2_logit_add_picks_1() -> None:
    p, bonus = [0.9, 0.1], [0.0, 1.0]
    assert probability_add(p, bonus) == pytest.approx([0.9, 1.1])
    assert argmax(probability_add(p, bonus)) == 1  # action 2
    assert argmax([z + b for z, b in zip(log_probs(p), bonus, strict=True)]) == 0  # action 1
    assert argmax(logit_update(log_probs(p), bonus, 1.0)) == 0
    # the same disagreement end to end: memory says b beats a; released normalised Â = (−1, 1)
    prior = prior_from_probs({"a": 0.9, "b": 0.1})
    memory = [("a", 0.0), ("b", 1.0)]
    released = released_policy(prior, memory, exponent=0.65, alpha=1.0, rng=random.Random(0))
    paper = paper_policy(prior, memory, beta=1.0, lam=0.65, alpha=5.0, rng=random.Random(0), greedy=True)
    assert released.estimate.advantages == (-1.0, 1.0) and released.chosen == "b"
    assert paper.estimate.advantages == (-1.0, 1.0) and paper.chosen == "a"


def test_discounted_returns_of_a_hand_computed_episode() -> None:
    # r = (0, 0, 1, −1), γ = 0.5: G3 = −1, G2 = 1 − 0.5 = 0.5, G1 = 0 + 0.25 = 0.25, G0 = 0.125
    assert discounted_returns([0, 0, 1, -1], 0.5) == [0.125, 0.25, 0.5, -1.0]
    assert discounted_returns([1, 1, 1], 1.0) == [3.0, 2.0, 1.0]
    assert discounted_returns([2, 5], 0.0) == [2.0, 5.0]
    assert discounted_returns([], 0.5) == []
    memory = StepMemory(gamma=0.5)
    rows = memory.add_episode([StepKey(f"s{t}") for t in range(4)], ["w", "x", "y", "z"], [0, 0, 1, -1])
    assert [r.ret for r in rows] == [0.125, 0.25, 0.5, -1.0]
    with pytest.raises(ValueError):
        discounted_returns([1.0], 1.5)


def test_the_released_retrieval_threshold_schedule() -> None:
    assert threshold_at(0) == pytest.approx(0.95)
    assert threshold_at(5) == pytest.approx(0.925)
    assert threshold_at(10) == pytest.approx(0.90)
    assert threshold_at(20) == pytest.approx(0.85)
    assert threshold_at(35) == pytest.approx(0.85)
    values = [threshold_at(s) for s in range(30)]
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))
    assert RetrievalConfig.released_jericho().threshold_at(20) == pytest.approx(0.85)
    assert RetrievalConfig.paper_jericho().threshold_at(20) == pytest.approx(0.95)  # fixed in the paper option


def test_softmax_keeps_zero_prior_options_at_zero() -> None:
    assert softmax([0.0, -math.inf]) == [1.0, 0.0]
    assert logit_update(log_probs([1.0, 0.0]), [0.0, 50.0], 3.0) == [1.0, 0.0]
    with pytest.raises(ValueError):
        softmax([-math.inf, -math.inf])
