"""`jitrl` (Just-In-Time Reinforcement Learning, Li et al., ICML 2026; liushiliushi/JitRL @143d221): a frozen actor
proposes options with a prior π₀ (option-index token logprobs or verbalised confidence); a kNN memory of past steps
(state key, action, discounted return) gives each option an advantage, which reweights the prior at decision time —
π ∝ π₀·exp(βÂ), sampled (`paper`), or Â added to a probability, argmax (`released`). The memory grows by one
episode per practice step and is read-only in val and test.

Modules: `method` (the practice step, params), `agent` (the episode agent: candidates, prior, keys, decision,
memory write), `replies` (strict reading of the actor's and evaluator's replies), `memory` (the memory files and an
episode's returns), `report_view`, and the model-free core: `core` (`JitRL`: decide, write an episode), `step_memory`
(the step memory and its retrieval), `policy` (priors, values, advantages, the two updates). See docs/methods/jitrl.md.
"""

from evoarena.methods.jitrl import report_view  # noqa: F401  (registers the "jitrl" report view)
from evoarena.methods.jitrl.method import JitRLMethod

__all__ = ["JitRLMethod"]
