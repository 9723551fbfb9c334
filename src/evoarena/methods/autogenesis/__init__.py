"""`autogenesis`: the harness as registered resources with versions, status and a learnability mask, updated by
Reflect → Improve proposals.

Modules: `registry` (the resources and their versions), `method` (the practice step); templates in `prompts/`. See
docs/methods/autogenesis.md.
"""

from evoarena.methods.autogenesis.method import Autogenesis

__all__ = ["Autogenesis"]
