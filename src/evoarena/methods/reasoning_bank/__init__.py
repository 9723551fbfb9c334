"""`reasoning_bank`: judge each trajectory, induce memory items, append; retrieve by query.

Modules: `method` (the bank, the judge and inducer replies, retrieval); templates in `prompts/`. See
docs/methods/reasoning_bank.md.
"""

from evoarena.methods.reasoning_bank.method import ReasoningBank

__all__ = ["ReasoningBank"]
