"""In-episode mechanisms: what runs inside an episode, step by step, rather than between versions of a harness.
JitRL's model-free core (step memory, kNN retrieval, advantages, the paper and released updates)."""

from evoarena.runtime.jitrl import Decision, JitRL, JitRLConfig
from evoarena.runtime.jitrl_memory import (
    MemoryRow,
    Neighbour,
    RetrievalConfig,
    StepKey,
    StepMemory,
    discounted_returns,
    released_returns,
)
from evoarena.runtime.jitrl_policy import (
    Estimate,
    PolicyStep,
    Prior,
    paper_policy,
    prior_from_confidence,
    prior_from_logprobs,
    prior_from_probs,
    released_policy,
)

__all__ = [
    "Decision",
    "Estimate",
    "JitRL",
    "JitRLConfig",
    "MemoryRow",
    "Neighbour",
    "PolicyStep",
    "Prior",
    "RetrievalConfig",
    "StepKey",
    "StepMemory",
    "discounted_returns",
    "paper_policy",
    "prior_from_confidence",
    "prior_from_logprobs",
    "prior_from_probs",
    "released_policy",
    "released_returns",
]
