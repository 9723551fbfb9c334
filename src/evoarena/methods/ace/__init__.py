"""`ace` (Agentic Context Engineering): generator → reflector → curator over a playbook.

Modules: `playbook` (the playbook's sections and bullets, its text form, the curator's operations), `method` (the
practice step and the skill form of the playbook); templates in `prompts/`. See docs/methods/ace.md.
"""

from evoarena.methods.ace.method import Ace

__all__ = ["Ace"]
