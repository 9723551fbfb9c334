"""JitRL against its source (no released code installs here: Jericho ROMs, OpenRouter): the constants, formulas and
study arms of seed 000's JitRL report (`/work/shared/seeds/000_56f36b8f00239512.txt`, cited by line) and of the
released-code notes (`harness-systems-as-released.md` § JitRL, liushiliushi/JitRL @143d221). Model-free and fast."""

from __future__ import annotations

import math
import random
from statistics import fmean, pstdev

import pytest

from evoarena.methods.jitrl.agent import memory_block
from evoarena.methods.jitrl.core import JitRL, JitRLConfig
from evoarena.methods.jitrl.memory import RewardPerturbation, StepRecord, episode_rows
from evoarena.methods.jitrl.method import JitRLMethod
from evoarena.methods.jitrl.policy import (
    episode_weight,
    kl_reweight,
    paper_estimate,
    prior_from_probs,
    probability_add,
    released_exploration_probability,
)
from evoarena.methods.jitrl.step_memory import Neighbour, RetrievalConfig, StepKey, StepMemory, discounted_returns

HERE = StepKey("a dark room with a door to the north", "open box take key")
ELSEWHERE = StepKey("a sunny garden full of flowers and bees", "walk around the pond")


def test_the_papers_jericho_constants() -> None:
    """Seed l.791–792: 3 candidates, k = 10, temperature 0.8; Jericho γ = .5, threshold .95, λ = .65, α = 5. Seed l.721:
    the Jericho state/history index weights 0.75/0.25."""
    cfg = JitRLConfig.paper_jericho()
    assert (cfg.gamma, cfg.lam, cfg.alpha) == (0.5, 0.65, 5.0)
    r = cfg.retrieval
    assert (r.k, r.threshold, r.state_weight, r.history_weight) == (10, 0.95, 0.75, 0.25)
    assert r.threshold_at(0) == r.threshold_at(40) == 0.95  # fixed
    params = JitRLMethod.Params()
    assert (params.options, params.temperature) == (3, 0.8)


def test_the_released_jericho_constants() -> None:
    """harness-systems-as-released.md § JitRL (l.12–19) and seed l.808–810: 0.3·J(history unigrams) + 0.7·J(state
    4-grams), threshold 0.95 falling to 0.85 over the first 20 steps, keep all hits > 0.98, k = 10; episode weight
    min(1 + episode/50·0.5, 1.5); exploration p = clamp(1/(1 + max conf), 0.05, 0.8)."""
    r = RetrievalConfig.released_jericho()
    assert (r.history_weight, r.state_weight, r.history_n, r.state_n, r.k, r.keep_above) == (0.3, 0.7, 1, 4, 10, 0.98)
    assert [r.threshold_at(s) for s in (0, 10, 20, 30)] == pytest.approx([0.95, 0.90, 0.85, 0.85])
    assert [episode_weight(e) for e in (0, 25, 50, 100)] == pytest.approx([1.0, 1.25, 1.5, 1.5])
    assert released_exploration_probability({"a": [1.0]}) == 0.8  # no action with two returns
    assert released_exploration_probability({"a": [100.0, 100.0, 100.0, 100.0]}) == 0.05


@pytest.mark.parametrize("lam,unseen_q", [(1.0, 2.0 + 5.0 / 4), (0.0, 0.0)])
def test_values_advantages_and_the_unseen_action(lam: float, unseen_q: float) -> None:
    """Seed l.729–732: V̂ = the mean of N(s); Q̂(s,a) = the mean of a's neighbours; an action no neighbour took gets
    V̂ + α/|N| with probability λ, else 0; Â = Q̂ − V̂, max-|Â| normalised."""
    est = paper_estimate(["a", "b", "c"], [("a", 4.0), ("a", 2.0), ("b", 1.0), ("b", 1.0)], lam=lam, alpha=5.0,
                         rng=random.Random(0))
    assert est.mean_return == 2.0 and est.q == pytest.approx((3.0, 1.0, unseen_q))
    raw = [q - 2.0 for q in est.q]
    assert est.advantages == pytest.approx([x / max(abs(y) for y in raw) for x in raw])


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 2.0, 4.0])
def test_the_update_is_the_kl_optimum_and_beta_scales_the_log_odds(beta: float) -> None:
    """Seed l.738–740: max E[Â] − (1/β)·KL(π′‖π₀) gives π* ∝ π₀·exp(βÂ), i.e. z′ = z + βÂ: between any two options
    the log-odds move by exactly β·(Â_i − Â_j); β = 0 returns π₀ (l.838). The seed gives no value for β (l.791–792):
    these are the swept values of recipes/jitrl-beta.yaml."""
    pi0, adv = [0.6, 0.3, 0.1], [-1.0, 0.25, 1.0]
    pi = kl_reweight(pi0, adv, beta)
    assert sum(pi) == pytest.approx(1.0)
    for i in range(3):
        for j in range(3):
            assert math.log(pi[i] / pi[j]) - math.log(pi0[i] / pi0[j]) == pytest.approx(beta * (adv[i] - adv[j]))


def test_a_larger_beta_trusts_the_memory_more() -> None:
    """Seed l.742: the larger β, the more the experience is trusted; the smaller, the more the base model."""
    best = [kl_reweight([0.6, 0.3, 0.1], [-1.0, 0.25, 1.0], b)[2] for b in (0.0, 0.5, 1.0, 2.0, 4.0)]
    assert best == sorted(best) and best[0] == pytest.approx(0.1) and best[-1] > 0.8


def memory_with(action: str, ret: float, n: int = 3) -> StepMemory:
    memory = StepMemory(0.5)
    memory.add_returns([HERE] * n, [action] * n, [ret] * n)
    return memory


def test_the_union_lets_an_action_only_the_memory_knows_be_chosen() -> None:
    """Seed l.734: the candidate set is the model's actions ∪ the neighbours' actions, memory-only actions starting
    at score 0, which lets JitRL find an old action the model missed — never one neither produced. The paper-faithful
    arm opens it (`memory_action_prior: 0.25`, the weight of one option under a uniform prior over k + 1 = 4)."""
    prior = prior_from_probs({"look": 0.7, "wait": 0.3})
    opened = JitRLConfig.paper_jericho(memory_action_prior=0.25)
    picks = [JitRL(opened, seed, memory_with("go north", 5.0)).decide(HERE, prior, 0) for seed in range(200)]
    assert all(p.policy.actions == ("look", "wait", "go north") for p in picks)
    assert all(p.record()["joined"] == ["go north"] for p in picks)
    share = sum(p.chosen == "go north" for p in picks) / len(picks)  # chosen, though the model never offered it
    expected = fmean(p.policy.scores[2] for p in picks)  # at the rate π′ gives it
    assert expected > 0.1 and share == pytest.approx(expected, abs=0.08)
    closed = JitRLConfig.paper_jericho()
    assert {JitRL(closed, s, memory_with("go north", 5.0)).decide(HERE, prior, 0).chosen for s in range(200)} \
        <= {"look", "wait"}


def test_wrong_retrieval_returns_memories_of_other_states() -> None:
    """Seed l.842 (check A.5, wrong retrieval): as many rows as the retrieval finds, all of other states (below the
    threshold), none of the true neighbours; nothing when nothing would be found."""
    memory = StepMemory(0.5)
    memory.add_returns([HERE] * 3 + [ELSEWHERE] * 5, ["a"] * 3 + ["b"] * 5, [1.0] * 8)
    config = RetrievalConfig.paper_jericho()
    right = memory.retrieve(HERE, config, 0)
    wrong = memory.retrieve_wrong(HERE, config, 0, random.Random(0))
    assert len(right) == len(wrong) == 3
    assert all(n.row.action == "a" for n in right) and all(n.row.action == "b" and n.similarity < 0.95 for n in wrong)
    unknown = StepKey("a cave", "dig")
    assert memory.retrieve(unknown, config, 0) == [] and memory.retrieve_wrong(unknown, config, 0, random.Random(0)) \
        == []
    decided = JitRL(JitRLConfig.paper_jericho(wrong_retrieval=True), 0, memory).decide(HERE, prior_from_probs(
        {"a": 0.5, "b": 0.5}), 0)
    assert {n.row.action for n in decided.neighbours} == {"b"}


STEPS = [StepRecord("s", "h", "x", d) for d in (0.0, 0.0, 1.0, 0.0, 2.0)]


def test_reward_noise_has_the_stated_scale() -> None:
    """Seed l.842 (A.5, reward noise): every reward learnt from gets N(0, σ²) noise, σ = `reward_noise`; the rows
    keep the true env reward; a replay draws the same noise, another episode other noise."""
    steps = [StepRecord("s", "h", "x", 0.0)] * 4000
    noise = RewardPerturbation("reward_noise", 2.0, "7")
    rows = episode_rows(steps, None, won=False, rewards="paper", gamma=0.5, episode=0, perturb=noise)
    learnt = [float(r.reward or 0.0) for r in rows]
    assert abs(fmean(learnt)) < 0.1 and pstdev(learnt) == pytest.approx(2.0, rel=0.05)
    assert all(r.delta == 0.0 for r in rows)
    again = episode_rows(steps, None, won=False, rewards="paper", gamma=0.5, episode=0, perturb=noise)
    other = episode_rows(steps, None, won=False, rewards="paper", gamma=0.5, episode=1, perturb=noise)
    assert [r.reward for r in again] == [r.reward for r in rows] != [r.reward for r in other]


@pytest.mark.parametrize("scores", [None, [1.0, -3.0, 10.0, 0.0, 2.0]])
def test_reward_inversion_negates_the_returns(scores: list[float] | None) -> None:
    """Seed l.842 (A.5, reward inversion): every reward learnt from (env reward, or the evaluator's step score) is
    negated, so the paper's returns are the true ones negated."""
    plain = episode_rows(STEPS, scores, won=True, rewards="paper", gamma=0.5, episode=0)
    flipped = episode_rows(STEPS, scores, won=True, rewards="paper", gamma=0.5, episode=0,
                           perturb=RewardPerturbation("reward_inversion"))
    assert [r.return_ for r in flipped] == pytest.approx([-(r.return_ or 0.0) for r in plain])
    assert any(r.return_ for r in plain) and [r.delta for r in flipped] == [s.delta for s in STEPS]


def test_the_score_delta_control_learns_from_the_true_score_only() -> None:
    """Seed l.852: a control arm rewarded only by the game's true score increments (`step_scores: none`): r_t is the
    score delta and G_t = Σ γ^u r_{t+u} (l.717)."""
    rows = episode_rows(STEPS, None, won=True, rewards="paper", gamma=0.5, episode=0)
    assert [r.reward for r in rows] == [s.delta for s in STEPS] and all(r.step_score is None for r in rows)
    assert [r.return_ for r in rows] == pytest.approx(discounted_returns([s.delta for s in STEPS], 0.5))
    assert JitRLMethod.Params(step_scores="none").step_scores == "none"


def test_the_prompt_baseline_shows_what_the_score_update_would_use() -> None:
    """Seed l.853 (the same-memory prompt baseline) and the paper's Table 8 (prompt-update vs logit-update with the
    same retrieved information, seed l.783): each neighbour action with its mean return (Q̂) and count, best first."""
    memory = StepMemory(0.5)
    memory.add_returns([HERE] * 4, ["a", "b", "b", "a"], [1.0, 4.0, 2.0, 0.0])
    shown = memory_block(memory.retrieve(HERE, RetrievalConfig.paper_jericho(), 0))
    assert shown.splitlines()[1:3] == ["- b: 3.00 (2×)", "- a: 0.50 (2×)"]
    assert memory_block([]) == ""
    assert isinstance(memory.retrieve(HERE)[0], Neighbour)


def test_the_digests_counter_example() -> None:
    """Seed l.814: p = (.9, .1), bonus (0, 1): the released probability add gives (.9, 1.1) and picks action 2; the
    paper's logit add gives (log .9, log .1 + 1) and picks action 1."""
    added = probability_add([0.9, 0.1], [0.0, 1.0])
    assert added == pytest.approx([0.9, 1.1]) and max(range(2), key=added.__getitem__) == 1
    pi = kl_reweight([0.9, 0.1], [0.0, 1.0], 1.0)
    assert pi[0] > pi[1]
