"""`skillprox` (Zheng et al., 2026): closed-loop forward skill updates, then a validation-gated Prox step.

Modules: `skill` (knowledge units, ablate, struct_ok, G), `patch` (the strict patch format, shrink locality),
`common` (H/C evaluation, model calls, record files), `forward`, `prox`, `method`. See docs/methods/skillprox.md.
"""

from evoarena.methods.skillprox import report_view  # noqa: F401  (registers the "skillprox" report view)
from evoarena.methods.skillprox.method import SkillProx

__all__ = ["SkillProx"]
