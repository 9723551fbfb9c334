"""`bpe` (EvoHarness-RL's prompt-time harness, "EvoHarness-Base"; seed 004, LLA@COLM 2026, no released code): the
agent's external state rendered each step as H_t = (Belief, Progress, Experience), read and written only through the
meta-actions `track`, `commit`, `recall` and `note`, which spend the same step budget as environment actions.

Modules: `belief` (the rule-based action–observation parser), `experience` (the four capped stores, keyword recall,
LFU), `agent` (the episode agent: H_t in the step prompt, the meta-actions), `goal` (the ALFWorld-like task
sentence), `evidence` (an episode's trace as evidence about the bank; the pollution rate), `consolidate` (add /
update / remove between episodes, by the consolidator or by rules), `method`, `report_view`. The RL part of the paper
(SFT + cost-aware GRPO) trains weights and is out of scope. See docs/methods/bpe.md.
"""

from evoarena.methods.bpe import report_view  # noqa: F401  (registers the "bpe" report view)
from evoarena.methods.bpe.method import BPE

__all__ = ["BPE"]
