"""`bootstrap_fewshot`: worked demonstrations kept in the harness, as DSPy's BootstrapFewShot builds them.

Modules: `method` (the demonstrations and how they are shown); templates in `prompts/`. See
docs/methods/bootstrap_fewshot.md.
"""

from evoarena.methods.bootstrap_fewshot.method import BootstrapFewShot

__all__ = ["BootstrapFewShot"]
