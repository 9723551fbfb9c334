"""JitRL's values, advantages and the two policy updates, on plain numbers (no memory, no model).

From the neighbours N(s) of a state, each a (action, return) pair: V̂(s) = mean return, Q̂(s, a) = mean return of
the neighbours that took a, Â = Q̂ − V̂. Two variants, because the paper and its released code differ (seed 000's
JitRL report §6; the digest's §7):

- `paper`: an action no neighbour took gets, with probability λ, V̂ + α/|N|, else 0; Â is divided by max |Â|; the
  policy is the KL-regularised optimum π ∝ π₀·exp(βÂ) — the logit add z′ = z + βÂ — and the action is sampled.
- `released`: memory-only actions with a positive mean return join the options at score 0; an unseen option gets
  V̂ + α/|N| with an adaptive probability p = clamp(1/(1 + max confidence), 0.05, 0.8), else 0, and then the baseline
  is recomputed as the mean of the per-action means; Â is divided by the largest positive Â (else by |min Â|),
  multiplied by the Jericho episode weight min(1 + episode/50·0.5, 1.5) and **added to a probability**
  (exp(logprob) or confidence/100); the highest score is taken.

The two disagree on the digest's counter-example: p = (.9, .1) with bonus (0, 1) — probability-add gives (.9, 1.1)
and picks action 2, logit-add gives (log .9, log .1 + 1) and picks action 1. Every random draw goes through the
`rng` passed in (a seeded `random.Random`), so a decision replays exactly."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import fmean, pstdev
from typing import Literal, Protocol


class Uniform(Protocol):
    """Where random draws come from: `random.Random(seed)`, or a scripted stand-in in tests."""

    def random(self) -> float: ...


# ---------------------------------------------------------------- priors π₀

@dataclass(frozen=True)
class Prior:
    """The base model's distribution over its proposed options: `probs` is π₀ (sums to 1); `raw` is what the
    released code adds advantages to (exp(logprob) of the option token, or confidence/100), not renormalised."""

    actions: tuple[str, ...]
    probs: tuple[float, ...]
    raw: tuple[float, ...]
    source: Literal["logprob", "confidence", "probs"]

    def __post_init__(self) -> None:
        if not self.actions:
            raise ValueError("jitrl: a prior needs at least one option")
        if len(set(self.actions)) != len(self.actions):
            raise ValueError("jitrl: prior options must be distinct")
        if not len(self.actions) == len(self.probs) == len(self.raw):
            raise ValueError("jitrl: one probability and one raw score per option")


def _clean(options: Mapping[str, float]) -> tuple[tuple[str, ...], list[float]]:
    actions = tuple(a.strip() for a in options)
    values = [float(v) for v in options.values()]
    if any(not math.isfinite(v) and v != -math.inf for v in values):
        raise ValueError("jitrl: prior values must be finite")
    return actions, values


def prior_from_logprobs(logprobs: Mapping[str, float]) -> Prior:
    """π₀ from each option's index-token logprob, renormalised over the options (a softmax of the logprobs); raw
    scores exp(logprob) as the released code uses them."""
    actions, values = _clean(logprobs)
    return Prior(actions, tuple(softmax(values)), tuple(math.exp(v) for v in values), "logprob")


def prior_from_confidence(confidence: Mapping[str, float]) -> Prior:
    """π₀ from verbalised 0–100 confidences (clamped), normalised by their sum (uniform when all are 0); raw
    scores confidence/100 as the released code uses them. A 0-confidence option keeps π₀ = 0 under the paper
    update (π′ ∝ π₀·exp(βÂ) never leaves π₀'s support)."""
    actions, values = _clean(confidence)
    conf = [min(100.0, max(0.0, v)) for v in values]
    total = sum(conf)
    probs = [c / total for c in conf] if total > 0 else [1.0 / len(conf)] * len(conf)
    return Prior(actions, tuple(probs), tuple(c / 100.0 for c in conf), "confidence")


def prior_from_probs(probs: Mapping[str, float]) -> Prior:
    """π₀ given directly (non-negative weights, normalised); raw scores are the weights as given."""
    actions, values = _clean(probs)
    if any(v < 0 for v in values) or sum(values) <= 0:
        raise ValueError("jitrl: probabilities must be ≥ 0 with a positive sum")
    total = sum(values)
    return Prior(actions, tuple(v / total for v in values), tuple(values), "probs")


# ---------------------------------------------------------------- the two update rules

def softmax(logits: Sequence[float]) -> list[float]:
    """Numerically stable softmax; −inf logits get probability 0 (at least one must be finite)."""
    finite = [z for z in logits if z != -math.inf]
    if not finite or any(math.isnan(z) or z == math.inf for z in logits):
        raise ValueError("jitrl: softmax needs finite logits (−inf allowed, not all)")
    top = max(finite)
    weights = [math.exp(z - top) if z != -math.inf else 0.0 for z in logits]
    total = sum(weights)
    return [w / total for w in weights]


def logit_update(logits: Sequence[float], advantages: Sequence[float], beta: float) -> list[float]:
    """The paper's update: softmax(z + βÂ) (any logits whose softmax is π₀ give the same result)."""
    if len(logits) != len(advantages):
        raise ValueError("jitrl: one advantage per option")
    return softmax([z + beta * a for z, a in zip(logits, advantages, strict=True)])


def kl_reweight(probs: Sequence[float], advantages: Sequence[float], beta: float) -> list[float]:
    """The closed form of max E_π′[Â] − (1/β)·KL(π′‖π₀): π′ ∝ π₀·exp(βÂ), normalised (computed in probability space;
    `logit_update` on log π₀ is the same distribution)."""
    if len(probs) != len(advantages):
        raise ValueError("jitrl: one advantage per option")
    top = max(beta * a for a in advantages)
    weights = [p * math.exp(beta * a - top) for p, a in zip(probs, advantages, strict=True)]
    total = sum(weights)
    if total <= 0:
        raise ValueError("jitrl: π₀ has no mass")
    return [w / total for w in weights]


def probability_add(scores: Sequence[float], bonus: Sequence[float]) -> list[float]:
    """The released update: the (weighted, normalised) advantage added to a probability-like score."""
    if len(scores) != len(bonus):
        raise ValueError("jitrl: one bonus per option")
    return [s + b for s, b in zip(scores, bonus, strict=True)]


def argmax(values: Sequence[float]) -> int:
    """Index of the largest value, the first on ties (Python's max, as the released code picks)."""
    return max(range(len(values)), key=values.__getitem__)


def sample(probs: Sequence[float], rng: Uniform) -> int:
    """One index drawn from `probs` with one `rng.random()`."""
    u, acc = rng.random(), 0.0
    for i, p in enumerate(probs):
        acc += p
        if u < acc:
            return i
    return max(i for i, p in enumerate(probs) if p > 0)


def log_probs(probs: Sequence[float]) -> list[float]:
    """log π₀, with log 0 = −inf."""
    return [math.log(p) if p > 0 else -math.inf for p in probs]


# ---------------------------------------------------------------- values and advantages

def group_returns(neighbours: Sequence[tuple[str, float]]) -> dict[str, list[float]]:
    """Neighbour returns by action, in the order actions first appear (the retrieval order)."""
    groups: dict[str, list[float]] = {}
    for action, ret in neighbours:
        groups.setdefault(action.strip(), []).append(float(ret))
    return groups


def released_exploration_probability(groups: Mapping[str, Sequence[float]], exponent: float = 0.65) -> float:
    """The released adaptive exploration probability: for each action with ≥ 2 returns, confidence =
    (max(0, mean)·1/(1 + CV))^exponent · max(n/4, 1), CV = std/mean (population std; ∞ when mean ≤ 0);
    p = clamp(1/(1 + max confidence), 0.05, 0.8), and 0.8 when no action has two returns."""
    best = None
    for rets in groups.values():
        if len(rets) < 2:
            continue
        mean = fmean(rets)
        stability = 1.0 / (1.0 + pstdev(rets) / mean) if mean > 0 else 0.0
        conf = (max(0.0, mean) * stability) ** exponent * max(len(rets) / 4.0, 1.0)
        best = conf if best is None else max(best, conf)
    if best is None:
        return 0.8
    return max(0.05, min(0.8, 1.0 / (1.0 + best)))


def episode_weight(episodes_done: int, horizon: float = 50.0, gain: float = 0.5, cap: float = 1.5) -> float:
    """The released Jericho multiplier on the normalised advantage: min(1 + episodes/50·0.5, 1.5), where
    `episodes_done` is the number of episodes already in memory (1.0 during the first)."""
    return min(1.0 + episodes_done / horizon * gain, cap)


@dataclass(frozen=True)
class Estimate:
    """Values for one decision. `actions` are the options scored (the prior's, then any memory-only ones that
    joined); `q` their Q̂ (unseen ones as assigned); `mean_return` V̂(s) over N(s); `baseline` what Â subtracts
    (V̂, or the released recomputed mean of per-action means); `advantages` normalised Â; `explored` the unseen
    options that drew the exploration bonus."""

    actions: tuple[str, ...]
    q: tuple[float, ...]
    mean_return: float
    baseline: float
    raw_advantages: tuple[float, ...]
    advantages: tuple[float, ...]
    unseen: tuple[str, ...]
    explored: tuple[str, ...]
    joined: tuple[str, ...]
    n: int
    exploration_prob: float


def paper_estimate(actions: Sequence[str], neighbours: Sequence[tuple[str, float]], *, lam: float, alpha: float,
                   rng: Uniform, normalise: bool = True) -> Estimate:
    """The paper's values: V̂ = mean of N(s); Q̂(a) = mean of a's neighbours; an unseen action draws once:
    with probability λ it gets V̂ + α/|N|, else 0; Â = Q̂ − V̂, divided by max |Â| (when `normalise` and > 0).
    Empty N(s): every Â is 0 and nothing is drawn."""
    groups = group_returns(neighbours)
    n = sum(len(r) for r in groups.values())
    if n == 0:
        zeros = tuple(0.0 for _ in actions)
        return Estimate(tuple(actions), zeros, 0.0, 0.0, zeros, zeros, tuple(actions), (), (), 0, lam)
    v = fmean(r for rets in groups.values() for r in rets)
    q: list[float] = []
    unseen: list[str] = []
    explored: list[str] = []
    for a in actions:
        if a in groups:
            q.append(fmean(groups[a]))
            continue
        unseen.append(a)
        if rng.random() < lam:
            explored.append(a)
            q.append(v + alpha / n)
        else:
            q.append(0.0)
    raw = [x - v for x in q]
    scale = max((abs(x) for x in raw), default=0.0)
    adv = [x / scale for x in raw] if normalise and scale > 0 else list(raw)
    return Estimate(tuple(actions), tuple(q), v, v, tuple(raw), tuple(adv), tuple(unseen), tuple(explored), (), n,
                    lam)


def released_estimate(actions: Sequence[str], neighbours: Sequence[tuple[str, float]], *, exponent: float,
                      alpha: float, rng: Uniform) -> Estimate:
    """The released values (Jericho `update_scores`): memory-only actions whose mean return is > 0 join the options
    (after the prior's); per-action means over N(s); each unseen option draws once: below the adaptive exploration
    probability it gets V̂ + α/|N|, else 0, and if any option was unseen the baseline becomes the mean of all
    per-action means (memory actions that did not join included); Â = mean − baseline, divided by the largest
    positive Â, else by |min Â|. Empty N(s): every Â is 0 and nothing is drawn."""
    groups = group_returns(neighbours)
    n = sum(len(r) for r in groups.values())
    if n == 0:
        zeros = tuple(0.0 for _ in actions)
        return Estimate(tuple(actions), zeros, 0.0, 0.0, zeros, zeros, tuple(actions), (), (), 0, 0.8)
    joined = [a for a, rets in groups.items() if a not in actions and fmean(rets) > 0]
    options = [*actions, *joined]
    means = {a: fmean(rets) for a, rets in groups.items()}
    v = fmean(r for rets in groups.values() for r in rets)
    p = released_exploration_probability(groups, exponent)
    unseen: list[str] = []
    explored: list[str] = []
    for a in options:
        if a in means:
            continue
        unseen.append(a)
        if rng.random() < p:
            explored.append(a)
            means[a] = v + alpha / n
        else:
            means[a] = 0.0
    baseline = fmean(means.values()) if unseen else v
    raw_all = {a: m - baseline for a, m in means.items()}
    positive = [x for x in raw_all.values() if x > 0]
    scale = max(positive) if positive else abs(min(raw_all.values()))
    raw = [raw_all[a] for a in options]
    adv = [x / scale for x in raw] if scale > 0 else [0.0] * len(raw)
    return Estimate(tuple(options), tuple(means[a] for a in options), v, baseline, tuple(raw), tuple(adv),
                    tuple(unseen), tuple(explored), tuple(joined), n, p)


# ---------------------------------------------------------------- one decision

@dataclass(frozen=True)
class PolicyStep:
    """One decision: the options, their prior (`prior`: π₀ for `paper`, the raw probability-like scores for
    `released`), the estimate, the final `scores` (π′ for `paper`, prior + weight·Â for `released`), the weight
    (β, or the episode weight) and the chosen option."""

    variant: Literal["paper", "released"]
    actions: tuple[str, ...]
    prior: tuple[float, ...]
    estimate: Estimate
    scores: tuple[float, ...]
    weight: float
    index: int

    @property
    def chosen(self) -> str:
        return self.actions[self.index]


def paper_policy(prior: Prior, neighbours: Sequence[tuple[str, float]], *, beta: float, lam: float, alpha: float,
                 rng: Uniform, memory_action_prior: float | None = None, greedy: bool = False,
                 normalise: bool = True) -> PolicyStep:
    """The paper's decision: π′ = softmax(log π₀ + βÂ) over the options, then one sampled action (`greedy`: the
    most probable). Options are the prior's; with `memory_action_prior` = p, every action only the neighbours took
    joins with prior weight p before π₀ is renormalised (the paper's candidate set is the union, but its "initial
    score 0" has no meaning on a probability scale, so by default the set stays closed)."""
    if beta < 0:
        raise ValueError("jitrl: beta must be ≥ 0")
    actions, weights = list(prior.actions), list(prior.probs)
    if memory_action_prior is not None:
        if memory_action_prior <= 0:
            raise ValueError("jitrl: memory_action_prior must be > 0")
        for a in group_returns(neighbours):
            if a not in actions:
                actions.append(a)
                weights.append(memory_action_prior)
    total = sum(weights)
    pi0 = [w / total for w in weights]
    est = paper_estimate(actions, neighbours, lam=lam, alpha=alpha, rng=rng, normalise=normalise)
    est = replace(est, joined=tuple(actions[len(prior.actions):]))
    pi = logit_update(log_probs(pi0), est.advantages, beta)
    index = argmax(pi) if greedy else sample(pi, rng)
    return PolicyStep("paper", tuple(actions), tuple(pi0), est, tuple(pi), beta, index)


def released_policy(prior: Prior, neighbours: Sequence[tuple[str, float]], *, exponent: float, alpha: float,
                    rng: Uniform, episodes_done: int = 0, use_episode_weight: bool = True,
                    fallback: str | None = None) -> PolicyStep:
    """The released decision: score = raw prior (0 for joined memory actions) + weight·Â, argmax. With no
    neighbours the released agent keeps its model's own pick: `fallback` when it is one of the options (the
    model's stated best option), else the option with the highest raw prior."""
    est = released_estimate(prior.actions, neighbours, exponent=exponent, alpha=alpha, rng=rng)
    base = [*prior.raw, *(0.0 for _ in est.joined)]
    if est.n == 0:
        picked = fallback.strip() if fallback is not None else None
        index = prior.actions.index(picked) if picked in prior.actions else argmax(prior.raw)
        return PolicyStep("released", est.actions, tuple(base), est, tuple(base), 1.0, index)
    weight = episode_weight(episodes_done) if use_episode_weight else 1.0
    scores = probability_add(base, [weight * a for a in est.advantages])
    return PolicyStep("released", est.actions, tuple(base), est, tuple(scores), weight, argmax(scores))
