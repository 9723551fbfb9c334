"""JitRL (Just-In-Time Reinforcement Learning, Li et al., ICML 2026): the model-free core that an actor calls at
every step. A frozen model proposes options with a prior π₀; the step memory gives the neighbours of the current
state; their returns give advantages; the advantages reweight the prior. At an episode's end its steps are written
to memory with their discounted returns. No gradient, no model call here: a method that drives an actor (proposes
options, reads logprobs or verbalised confidence, writes state/history keys, gets per-step rewards) sits above.

Two variants (`JitRLConfig.variant`): `paper` — π′ ∝ π₀·exp(βÂ), sampled — and `released` — Â added to a
probability, argmax — with the constants of each source (`paper_jericho`, `released_jericho`); see
docs/methods/jitrl.md for where every constant comes from. The parts live in `step_memory` (step memory,
retrieval) and `policy` (priors, values, advantages, updates)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evoarena.methods.jitrl.policy import PolicyStep, Prior, paper_policy, released_policy
from evoarena.methods.jitrl.step_memory import MemoryRow, Neighbour, RetrievalConfig, StepKey, StepMemory

Variant = Literal["paper", "released"]


@dataclass(frozen=True)
class JitRLConfig:
    """Everything a JitRL decision depends on. `lam` is λ: in `paper` the probability that an unseen option gets the
    exploration bonus; in `released` the exponent of the adaptive exploration confidence (the released code's
    `exploration_rate`, 0.65 — the paper's λ value, put to another use). `alpha` is the bonus numerator α (α/|N|).
    `beta` (paper) scales Â in the logit add; `episode_weight` (released) turns the Jericho multiplier on.
    `memory_action_prior` (paper): prior weight of actions only the neighbours took (None: closed option set).
    `greedy` (paper): take the most probable action instead of sampling. `wrong_retrieval` (the seed's check A.5):
    every retrieval returns as many rows as it would, drawn from rows of *other* states (below the threshold)."""

    variant: Variant
    gamma: float = 0.5
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    lam: float = 0.65
    alpha: float = 5.0
    beta: float = 1.0
    episode_weight: bool = True
    memory_action_prior: float | None = None
    greedy: bool = False
    wrong_retrieval: bool = False

    def __post_init__(self) -> None:
        if self.variant not in ("paper", "released"):
            raise ValueError(f"jitrl: variant must be 'paper' or 'released', got {self.variant!r}")
        if self.alpha < 0 or self.beta < 0 or self.lam < 0:
            raise ValueError("jitrl: alpha, beta and lam must be ≥ 0")
        if self.variant == "paper" and self.lam > 1:
            raise ValueError("jitrl: the paper's λ is a probability (≤ 1)")

    @classmethod
    def paper_jericho(cls, **overrides: Any) -> JitRLConfig:
        """The paper's Jericho configuration: γ 0.5, threshold 0.95 (fixed), state/history 0.75/0.25, k 10,
        λ 0.65, α 5; β is not given in the seed's report: 1.0 here."""
        base: dict[str, Any] = {"variant": "paper", "gamma": 0.5, "retrieval": RetrievalConfig.paper_jericho(),
                                "lam": 0.65, "alpha": 5.0, "beta": 1.0}
        return cls(**{**base, **overrides})

    @classmethod
    def released_jericho(cls, **overrides: Any) -> JitRLConfig:
        """The released Jericho agent (@143d221, main.py defaults): γ 0.5, r 0.95 → 0.85 over 20 steps, keep > 0.98,
        k 10, exploration exponent 0.65, α 1.0 (the agent's default; main.py has no flag for it), episode weight on."""
        base: dict[str, Any] = {"variant": "released", "gamma": 0.5, "retrieval": RetrievalConfig.released_jericho(),
                                "lam": 0.65, "alpha": 1.0, "episode_weight": True}
        return cls(**{**base, **overrides})


@dataclass(frozen=True)
class Decision:
    """One step's decision with what led to it: the neighbours retrieved, the threshold in force, the policy
    step (options, prior, Q̂/V̂/Â, final scores, chosen). `record()` is the JSON-able trace row."""

    policy: PolicyStep
    neighbours: tuple[Neighbour, ...]
    threshold: float
    step: int

    @property
    def chosen(self) -> str:
        return self.policy.chosen

    def record(self) -> dict[str, Any]:
        est = self.policy.estimate
        return {
            "variant": self.policy.variant, "step": self.step, "chosen": self.chosen,
            "options": list(self.policy.actions), "prior": list(self.policy.prior), "q": list(est.q),
            "mean_return": est.mean_return, "baseline": est.baseline, "advantages": list(est.advantages),
            "scores": list(self.policy.scores), "weight": self.policy.weight, "explored": list(est.explored),
            "joined": list(est.joined), "exploration_prob": est.exploration_prob, "threshold": self.threshold,
            "neighbours": [{"episode": n.row.episode, "step": n.row.step, "action": n.row.action,
                            "return": n.row.ret, "similarity": n.similarity} for n in self.neighbours],
        }


class JitRL:
    """One agent's JitRL state across episodes: its step memory and a seeded random stream (exploration draws and
    the paper's sampling), so the same seed and the same inputs give the same decisions."""

    def __init__(self, config: JitRLConfig, seed: int = 0, memory: StepMemory | None = None) -> None:
        self.config = config
        self.memory = memory if memory is not None else StepMemory(config.gamma)
        self.rng = random.Random(seed)
        self.wrong_rng = random.Random(f"{seed}:wrong-retrieval")  # its own stream: the decision draws stay aligned

    def neighbours(self, key: StepKey, step: int) -> list[Neighbour]:
        """N(s) for `key` at `step`: the retrieval's hits, or with `wrong_retrieval` as many rows of other states."""
        if self.config.wrong_retrieval:
            return self.memory.retrieve_wrong(key, self.config.retrieval, step, self.wrong_rng)
        return self.memory.retrieve(key, self.config.retrieval, step)

    def decide(self, key: StepKey, prior: Prior, step: int, fallback: str | None = None) -> Decision:
        """Choose among `prior`'s options at `step` steps into the episode. `fallback` (released only) is the
        model's own pick, kept when memory has no neighbour."""
        cfg = self.config
        neighbours = self.neighbours(key, step)
        pairs = [(n.row.action, n.row.ret) for n in neighbours]
        if cfg.variant == "paper":
            policy = paper_policy(prior, pairs, beta=cfg.beta, lam=cfg.lam, alpha=cfg.alpha, rng=self.rng,
                                  memory_action_prior=cfg.memory_action_prior, greedy=cfg.greedy)
        else:
            policy = released_policy(prior, pairs, exponent=cfg.lam, alpha=cfg.alpha, rng=self.rng,
                                     episodes_done=self.memory.episodes, use_episode_weight=cfg.episode_weight,
                                     fallback=fallback)
        return Decision(policy, tuple(neighbours), cfg.retrieval.threshold_at(step), step)

    def add_episode(self, keys: Sequence[StepKey], actions: Sequence[str], rewards: Sequence[float]) -> list[MemoryRow]:
        """Write a finished episode to memory (G_t from the per-step rewards with the config's γ)."""
        return self.memory.add_episode(keys, actions, rewards)
