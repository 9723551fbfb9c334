"""`history`: every earlier practice output and its feedback, raw, in the solve prompt (no update step).

Modules: `method`; templates in `prompts/`. See docs/methods/history.md.
"""

from evoarena.methods.history.method import History

__all__ = ["History"]
