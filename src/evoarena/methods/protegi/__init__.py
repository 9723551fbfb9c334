"""`protegi`: prompt optimisation with textual "gradients", Monte-Carlo paraphrases, beam search and a bandit.

Modules: `method` (a round per practice step; the final choice on val), `expand` (errors, critiques, rewrites,
paraphrases), `bandit` (UCB or uniform allocation of the evaluation budget), `label_check` (the label-semantics flip
screen), `state`, `report_view` (its report section); templates in `prompts/`. See docs/methods/protegi.md.
"""

from evoarena.methods.protegi import report_view  # noqa: F401  (registers the "protegi" report view)
from evoarena.methods.protegi.method import Protegi

__all__ = ["Protegi"]
