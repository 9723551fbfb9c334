"""`reflexion`: after a failed trial, reflect verbally and retry with the reflection.

Modules: `method` (the reflections kept in the harness); templates in `prompts/`. See docs/methods/reflexion.md.
"""

from evoarena.methods.reflexion.method import Reflexion

__all__ = ["Reflexion"]
