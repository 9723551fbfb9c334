"""`evoskill`: skill discovery with a top-k frontier of programs.

Modules: `method` (the frontier, proposals, the skill writer, the skill form of the live skills); templates in
`prompts/`. See docs/methods/evoskill.md.
"""

from evoarena.methods.evoskill.method import EvoSkill

__all__ = ["EvoSkill"]
