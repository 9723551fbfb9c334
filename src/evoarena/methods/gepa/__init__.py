"""`gepa`: reflective prompt evolution with a per-instance Pareto candidate pool.

Modules: `method` (the pool, the reflective proposal, the Pareto selection); templates in `prompts/`. See
docs/methods/gepa.md.
"""

from evoarena.methods.gepa.method import Gepa

__all__ = ["Gepa"]
